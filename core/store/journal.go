package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// JournalEntry is one row of the change journal (migrations 11, 12): one path a change of a zone
// touched. The kernel writes it pending before the change and settles it after
// (core/journal.go); only settled rows are listed.
type JournalEntry struct {
	// ID is the row's number, the change_id the model names; Batch and N the tool call (or
	// undo) it belongs to and its place there.
	ID    int64
	Batch string
	N     int
	// Pending rows are written before their change ran; Replica is the process that wrote
	// them (a dead one's pending rows are settled by the leader).
	Pending bool
	Replica string
	At      time.Time
	// UserID, ConvID and Tool are the caller and the tool that made the change.
	UserID, ConvID, Tool string
	// Owner is the owner of the zone's space; Zone its label, GroupID its group.
	Owner   Owner
	Zone    string
	GroupID string
	// Path is the entry changed (the new name of a rename, whose old name is OldPath); Op
	// is create, write, delete, rename, add or command; Dir says it is a folder.
	Path, OldPath, Op string
	Dir               bool
	// Made is the topmost folder a creation made for its path ("" when none).
	Made string
	// Sizes are -1 for an absent entry; lines -1 when not counted.
	BytesBefore, BytesAfter  int64
	LinesAdded, LinesRemoved int64
	Commit                   string
	Image                    string
	ImageBytes               int64
	// ImageData is an inline image's bytes (sealed like its zone), written with the row and
	// never read back with it: JournalImageData reads them.
	ImageData             []byte
	NoImage               string
	BeforeIdent, OldIdent string
	AfterIdent            string
	Undoes, UndoneBy      string
}

// journalColumns are the columns of a row as written and read, id apart.
const journalColumns = `batch, n, state, replica_id, at_us, user_id, conv_id, tool, owner_kind, owner_id, zone,
	group_id, path, old_path, made, op, is_dir, bytes_before, bytes_after, lines_added, lines_removed, commit_id, image,
	image_bytes, no_image, before_ident, old_ident, after_ident, undoes, undone_by`

// journalArity is the number of journalColumns, and of the columns an INSERT writes:
// journalColumns and image_data.
const (
	journalArity = 30
	insertArity  = journalArity + 1
)

// journalChunk is the rows of one INSERT. Measured on SQLite (modernc) with 10,000 rows:
// 5 rows a statement 0.6 s, 1 row 0.8 s, 32 rows 1.6 s, 500 rows over 30 s (the cost of a
// statement grows faster than its parameters).
const journalChunk = 5

func (e JournalEntry) values() []any {
	state := "done"
	if e.Pending {
		state = "pending"
	}
	return []any{e.Batch, e.N, state, e.Replica, micros(e.At), e.UserID, e.ConvID, e.Tool, e.Owner.Kind, e.Owner.ID,
		e.Zone, e.GroupID, e.Path, e.OldPath, e.Made, e.Op, e.Dir, e.BytesBefore, e.BytesAfter, e.LinesAdded, e.LinesRemoved,
		e.Commit, e.Image, e.ImageBytes, e.NoImage, e.BeforeIdent, e.OldIdent, e.AfterIdent, e.Undoes, e.UndoneBy,
		imageData(e.ImageData)}
}

// imageData is an inline image as a parameter: NULL when there is none (nil), the bytes
// otherwise (an empty file's image is an empty blob, not NULL).
func imageData(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// scanJournal reads a row of `SELECT id, journalColumns`.
func scanJournal(rs interface{ Scan(...any) error }) (JournalEntry, error) {
	var e JournalEntry
	var state string
	var at, dir int64
	err := rs.Scan(&e.ID, &e.Batch, &e.N, &state, &e.Replica, &at, &e.UserID, &e.ConvID, &e.Tool, &e.Owner.Kind,
		&e.Owner.ID, &e.Zone, &e.GroupID, &e.Path, &e.OldPath, &e.Made, &e.Op, &dir, &e.BytesBefore, &e.BytesAfter,
		&e.LinesAdded, &e.LinesRemoved, &e.Commit, &e.Image, &e.ImageBytes, &e.NoImage, &e.BeforeIdent,
		&e.OldIdent, &e.AfterIdent, &e.Undoes, &e.UndoneBy)
	e.Pending, e.At, e.Dir = state == "pending", fromMicros(at), dir != 0
	return e, err
}

// insertSQL[k] is the INSERT of k rows (1 to journalChunk).
var insertSQL = func() (out [journalChunk + 1]string) {
	for k := 1; k <= journalChunk; k++ {
		var b strings.Builder
		b.WriteString(`INSERT INTO journal (` + journalColumns + `, image_data) VALUES `)
		for i := range k {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for j := range insertArity {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "$%d", i*insertArity+j+1)
			}
			b.WriteByte(')')
		}
		out[k] = b.String()
	}
	return out
}()

// checkRows refuses rows without a batch, a user or a valid owner.
func checkRows(rows []JournalEntry) error {
	for _, e := range rows {
		if err := e.Owner.validate(); err != nil {
			return err
		}
		if e.Batch == "" || e.UserID == "" {
			return errors.New("store: a journal row needs a batch and a user")
		}
	}
	return nil
}

// insertJournal inserts rows in chunks through c.
func insertJournal(ctx context.Context, c conn, rows []JournalEntry) error {
	if err := checkRows(rows); err != nil {
		return err
	}
	for start := 0; start < len(rows); start += journalChunk {
		chunk := rows[start:min(start+journalChunk, len(rows))]
		args := make([]any, 0, len(chunk)*insertArity)
		for _, e := range chunk {
			args = append(args, e.values()...)
		}
		if _, err := c.exec(ctx, insertSQL[len(chunk)], args...); err != nil {
			return err
		}
	}
	return nil
}

// JournalBegin writes rows (pending, or settled), all or none: up to journalChunk rows as
// one statement, which needs no transaction of its own (one row, a change's pending row on
// every write, through a prepared statement), more in one transaction.
func (d *DB) JournalBegin(ctx context.Context, rows []JournalEntry) error {
	err := checkRows(rows)
	switch {
	case err != nil || len(rows) == 0:
	case len(rows) == 1:
		err = d.insertOne(ctx, rows[0])
	case len(rows) <= journalChunk:
		err = insertJournal(ctx, d.conn, rows)
	default:
		err = d.inTx(ctx, func(ctx context.Context, tx conn) error { return insertJournal(ctx, tx, rows) })
	}
	if err != nil {
		return fmt.Errorf("store: write journal: %w", err)
	}
	return nil
}

// JournalSettle settles the pending rows of batch in one transaction: each of done is
// marked done with its after fields (sizes, lines, commit, image, identity), the rows
// numbered drop are deleted (their change did not happen), and add are inserted settled (a
// command's or an addition's paths, which replace their pending placeholder in drop). The
// settlements queued before it (JournalSettleLater) are written first.
func (d *DB) JournalSettle(ctx context.Context, batch string, done []JournalEntry, drop []int, add []JournalEntry) error {
	d.flushJournal()
	err := d.inTx(ctx, func(ctx context.Context, tx conn) error { return settleRows(ctx, tx, batch, done, drop, add) })
	if err != nil {
		return fmt.Errorf("store: settle journal: %w", err)
	}
	return nil
}

// settleSQL marks row n of a batch done. An image the row lost while its settlement was
// queued (evicted: JournalDropImage) is not brought back.
const settleSQL = `UPDATE journal SET state = 'done', bytes_after = $3, lines_added = $4, lines_removed = $5,
	commit_id = $6, image = CASE WHEN image = '' AND no_image <> '' THEN image ELSE $7 END,
	image_bytes = CASE WHEN image = '' AND no_image <> '' THEN image_bytes ELSE $8 END,
	no_image = CASE WHEN image = '' AND no_image <> '' THEN no_image ELSE $9 END, after_ident = $10,
	is_dir = $11 WHERE batch = $1 AND n = $2`

// settleRows is JournalSettle inside the transaction tx; several rows done share one
// prepared UPDATE.
func settleRows(ctx context.Context, tx conn, batch string, done []JournalEntry, drop []int, add []JournalEntry) error {
	update, release, err := settleUpdate(ctx, tx, len(done))
	if err != nil {
		return err
	}
	defer release()
	return settleWith(ctx, tx, update, batch, done, drop, add)
}

// settleUpdate is the UPDATE of settleSQL for n rows in the transaction tx: prepared once
// when n > 1 (call release after the last).
func settleUpdate(ctx context.Context, tx conn, n int) (update func(args ...any) error, release func(), err error) {
	update = func(args ...any) error {
		_, err := tx.exec(ctx, settleSQL, args...)
		return err
	}
	t, ok := tx.x.(*sql.Tx)
	if !ok || n <= 1 {
		return update, func() {}, nil
	}
	st, err := t.PrepareContext(ctx, settleSQL)
	if err != nil {
		return nil, nil, err
	}
	return func(args ...any) error {
		_, err := st.ExecContext(ctx, tx.dialect.args(args)...)
		return err
	}, func() { _ = st.Close() }, nil
}

// settleWith is settleRows with the UPDATE update.
func settleWith(ctx context.Context, tx conn, update func(args ...any) error, batch string, done []JournalEntry, drop []int, add []JournalEntry) error {
	for _, e := range done {
		if err := update(batch, e.N, e.BytesAfter, e.LinesAdded, e.LinesRemoved, e.Commit, e.Image, e.ImageBytes,
			e.NoImage, e.AfterIdent, e.Dir); err != nil {
			return err
		}
	}
	for _, n := range drop {
		if _, err := tx.exec(ctx, `DELETE FROM journal WHERE batch = $1 AND n = $2`, batch, n); err != nil {
			return err
		}
	}
	return insertJournal(ctx, tx, add)
}

// JournalPending lists the pending rows written by replica ("" = by any), oldest first
// (through the index of the pending rows alone: two forms, as the planner uses an index
// only for a condition it can see).
func (d *DB) JournalPending(ctx context.Context, replica string) ([]JournalEntry, error) {
	if replica == "" {
		return d.journalRows(ctx, `state = 'pending' ORDER BY id`)
	}
	return d.journalRows(ctx, `state = 'pending' AND replica_id = $1 ORDER BY id`, replica)
}

// JournalQuery selects settled rows for Journal.
type JournalQuery struct {
	// UserID is required; ConvID "" is every conversation of the user.
	UserID, ConvID string
	// Zone and GroupID narrow to one zone ("" = every zone); Path to a path and what is below.
	Zone, GroupID, Path string
	// Since keeps the rows at or after it (zero: all).
	Since time.Time
	// Offset and Limit page the rows, newest first (Limit 0: no limit).
	Offset, Limit int
}

// Journal lists the settled rows q selects, newest first.
func (d *DB) Journal(ctx context.Context, q JournalQuery) ([]JournalEntry, error) {
	if q.UserID == "" {
		return nil, errors.New("store: the journal is listed per user")
	}
	where := `state = 'done' AND user_id = $1 AND ($2 = '' OR conv_id = $2) AND ($3 = '' OR zone = $3)
		AND ($4 = '' OR group_id = $4) AND ($5 = '' OR path = $5 OR old_path = $5 OR substr(path, 1, length($6)) = $6)
		AND at_us >= $7 ORDER BY id DESC`
	args := []any{q.UserID, q.ConvID, q.Zone, q.GroupID, q.Path, q.Path + "/", int64(0)}
	if !q.Since.IsZero() {
		args[6] = micros(q.Since)
	}
	if q.Limit > 0 {
		where += fmt.Sprintf(` LIMIT %d OFFSET %d`, q.Limit, max(q.Offset, 0))
	}
	return d.journalRows(ctx, where, args...)
}

// JournalByID is the row id (ok false when there is none).
func (d *DB) JournalByID(ctx context.Context, id int64) (JournalEntry, bool, error) {
	rows, err := d.journalRows(ctx, `id = $1`, id)
	if err != nil || len(rows) == 0 {
		return JournalEntry{}, false, err
	}
	return rows[0], true, nil
}

// JournalBatch lists the settled rows of one batch, in their order.
func (d *DB) JournalBatch(ctx context.Context, batch string) ([]JournalEntry, error) {
	return d.journalRows(ctx, `batch = $1 AND state = 'done' ORDER BY n`, batch)
}

// JournalLater lists the settled rows of o's zone (and group) after the row id that touched
// p: p itself, below it, a folder above it, or a rename from or onto any of these.
func (d *DB) JournalLater(ctx context.Context, o Owner, zone, p string, after int64) ([]JournalEntry, error) {
	return d.journalRows(ctx, `state = 'done' AND owner_kind = $1 AND owner_id = $2 AND zone = $3 AND id > $4 AND
		(path = $5 OR old_path = $5 OR substr(path, 1, length($6)) = $6 OR substr(old_path, 1, length($6)) = $6
		OR substr($5, 1, length(path) + 1) = path || '/' OR (old_path <> '' AND substr($5, 1, length(old_path) + 1) = old_path || '/'))
		ORDER BY id`, o.Kind, o.ID, zone, after, p, p+"/")
}

// JournalMarkUndone records that the undo batch by reverted the rows ids.
func (d *DB) JournalMarkUndone(ctx context.Context, ids []int64, by string) error {
	err := d.inTx(ctx, func(ctx context.Context, tx conn) error {
		for _, id := range ids {
			if _, err := tx.exec(ctx, `UPDATE journal SET undone_by = $1 WHERE id = $2`, by, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: mark undone: %w", err)
	}
	return nil
}

// JournalExpire deletes the settled rows of o (the zero Owner: of everyone) written before
// t; it returns how many.
func (d *DB) JournalExpire(ctx context.Context, o Owner, t time.Time) (int64, error) {
	q, args := `DELETE FROM journal WHERE state = 'done' AND at_us < $1`, []any{micros(t)}
	if o != (Owner{}) { // the owner's rows through its index, not every row
		q, args = q+` AND owner_kind = $2 AND owner_id = $3`, append(args, o.Kind, o.ID)
	}
	res, err := d.exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("store: expire journal: %w", err)
	}
	return res.RowsAffected()
}

// JournalImage is one before-image of an owner's journal area, with the bytes it holds and
// the newest row that names it.
type JournalImage struct {
	Image  string
	Bytes  int64
	Newest time.Time
}

// JournalImages lists the images o's rows name in its journal area (cas: and tree:) or hold
// inline (inline:), the least recently named first. An object is stored once however many
// rows name it; an inline image once per row that holds it (its bytes are their sum).
func (d *DB) JournalImages(ctx context.Context, o Owner) ([]JournalImage, error) {
	d.flushJournal()
	rs, err := d.query(ctx, `SELECT image, CASE WHEN substr(image, 1, 7) = 'inline:' THEN SUM(image_bytes) ELSE MAX(image_bytes) END,
		MAX(at_us) FROM journal WHERE owner_kind = $1 AND owner_id = $2 AND (substr(image, 1, 4) = 'cas:'
		OR substr(image, 1, 5) = 'tree:' OR substr(image, 1, 7) = 'inline:') GROUP BY image ORDER BY MAX(at_us), image`, o.Kind, o.ID)
	if err != nil {
		return nil, fmt.Errorf("store: journal images: %w", err)
	}
	defer rs.Close()
	var out []JournalImage
	for rs.Next() {
		var im JournalImage
		var at int64
		if err := rs.Scan(&im.Image, &im.Bytes, &at); err != nil {
			return nil, fmt.Errorf("store: journal images: %w", err)
		}
		im.Newest = fromMicros(at)
		out = append(out, im)
	}
	return out, rs.Err()
}

// JournalDropImage forgets the image of o's rows that name it, saying why (evicted).
func (d *DB) JournalDropImage(ctx context.Context, o Owner, image, why string) error {
	if _, err := d.exec(ctx, `UPDATE journal SET image = '', image_bytes = 0, no_image = $4, image_data = NULL
		WHERE owner_kind = $1 AND owner_id = $2 AND image = $3`, o.Kind, o.ID, image, why); err != nil {
		return fmt.Errorf("store: drop journal image: %w", err)
	}
	return nil
}

// journalRows runs `SELECT id, journalColumns FROM journal WHERE where`, once the queued
// settlements are written.
func (d *DB) journalRows(ctx context.Context, where string, args ...any) ([]JournalEntry, error) {
	d.flushJournal()
	rs, err := d.query(ctx, `SELECT id, `+journalColumns+` FROM journal WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read journal: %w", err)
	}
	defer rs.Close()
	var out []JournalEntry
	for rs.Next() {
		e, err := scanJournal(rs)
		if err != nil {
			return nil, fmt.Errorf("store: read journal: %w", err)
		}
		out = append(out, e)
	}
	return out, rs.Err()
}
