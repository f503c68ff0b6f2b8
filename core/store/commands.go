package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Command is a writing command running in a versioned space, recorded before it runs and
// forgotten once its settlement ended (core/recover_commands.go): a row left behind is a
// command that died with its server, whose guards the recovery applies.
type Command struct {
	// ID is the row's random id; Replica the id of the process that runs it.
	ID, Replica string
	// Owner is the owner of the space it runs in (a user's Documents, a group's space).
	Owner Owner
	// UserID, Name, Email and ConvID are the caller: the author of its commit and the
	// conversation whose locks it may change.
	UserID, Name, Email, ConvID string
	// Message is the commit message it would have written.
	Message string
	// Protected are the protected names (.git...) the zone held before it ran: they pre-date
	// it and are kept, as its own guard keeps them.
	Protected []string
	// Started is when it was recorded (this process's clock).
	Started time.Time
}

// StartCommand records c before it runs.
func (d *DB) StartCommand(ctx context.Context, c Command) error {
	if err := c.Owner.validate(); err != nil {
		return err
	}
	if c.ID == "" || c.Replica == "" || c.UserID == "" {
		return errors.New("store: a command needs an id, a replica and a user")
	}
	quoted := make([]string, len(c.Protected))
	for i, p := range c.Protected {
		quoted[i] = strconv.Quote(p)
	}
	if _, err := d.exec(ctx, `INSERT INTO commands (id, replica_id, owner_kind, owner_id, user_id, user_name, user_email,
		conv_id, message, protected, started_us) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		c.ID, c.Replica, c.Owner.Kind, c.Owner.ID, c.UserID, c.Name, c.Email, c.ConvID, c.Message,
		strings.Join(quoted, "\n"), micros(c.Started)); err != nil {
		return fmt.Errorf("store: record command: %w", err)
	}
	return nil
}

// EndCommand forgets the command id (its settlement ended, or its recovery committed).
func (d *DB) EndCommand(ctx context.Context, id string) error {
	if _, err := d.exec(ctx, `DELETE FROM commands WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: forget command: %w", err)
	}
	return nil
}

// Commands lists the recorded commands of the space of o, or of every space when o is the
// zero Owner, oldest first.
func (d *DB) Commands(ctx context.Context, o Owner) ([]Command, error) {
	q, args := `SELECT id, replica_id, owner_kind, owner_id, user_id, user_name, user_email, conv_id, message,
		protected, started_us FROM commands`, []any{}
	if o != (Owner{}) {
		q, args = q+` WHERE owner_kind = $1 AND owner_id = $2`, []any{o.Kind, o.ID}
	}
	rs, err := d.query(ctx, q+` ORDER BY started_us, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list commands: %w", err)
	}
	defer rs.Close()
	var out []Command
	for rs.Next() {
		var c Command
		var protected string
		var started int64
		if err := rs.Scan(&c.ID, &c.Replica, &c.Owner.Kind, &c.Owner.ID, &c.UserID, &c.Name, &c.Email, &c.ConvID,
			&c.Message, &protected, &started); err != nil {
			return nil, fmt.Errorf("store: list commands: %w", err)
		}
		for line := range strings.SplitSeq(protected, "\n") {
			if p, err := strconv.Unquote(line); err == nil {
				c.Protected = append(c.Protected, p)
			}
		}
		c.Started = fromMicros(started)
		out = append(out, c)
	}
	return out, rs.Err()
}
