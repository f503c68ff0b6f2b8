package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Member is what the server has seen of a user in a group: the display name and time of
// the last request that listed the group, and Left, the time of the first request after
// that which did not (zero while the user is a member).
type Member struct {
	GroupID, UserID, Name string
	LastSeen, Left        time.Time
}

// The member queries, named so that a test can check each is an index search (migration 6:
// the primary key (group_id, user_id), group_members_list and group_members_user).
const (
	// memberListQuery lists a group's current members seen since $2, most recent first.
	memberListQuery = `SELECT user_id, name, last_seen_us FROM group_members
		WHERE group_id = $1 AND left_us = 0 AND last_seen_us >= $2
		ORDER BY last_seen_us DESC, user_id LIMIT $3`
	memberCountQuery = `SELECT COUNT(*) FROM group_members
		WHERE group_id = $1 AND left_us = 0 AND last_seen_us >= $2`
	// memberActiveQuery lists the groups a user is recorded in and has not left.
	memberActiveQuery = `SELECT group_id FROM group_members WHERE user_id = $1 AND left_us = 0`
	memberQuery       = `SELECT name, last_seen_us, left_us FROM group_members WHERE group_id = $1 AND user_id = $2`
)

// SeeMembers records one request of userID listing groups at time now, in one transaction:
// each group's row gets name and last_seen (and is no longer left), and every group the
// user was recorded in and that the request does not list is marked left at now. The rows
// are never deleted: "left" is what refuses a former member's links.
func (d *DB) SeeMembers(ctx context.Context, userID, name string, groups []string, now time.Time) error {
	at := micros(now)
	err := d.inTx(ctx, func(ctx context.Context, tx conn) error {
		active, err := groupIDs(ctx, tx, userID)
		if err != nil {
			return err
		}
		listed := make(map[string]bool, len(groups))
		for _, g := range groups {
			listed[g] = true
			if _, err := tx.exec(ctx, `INSERT INTO group_members
				(group_id, user_id, name, first_seen_us, last_seen_us, left_us) VALUES ($1, $2, $3, $4, $4, 0)
				ON CONFLICT (group_id, user_id) DO UPDATE SET
					name = excluded.name, last_seen_us = excluded.last_seen_us, left_us = 0`,
				g, userID, name, at); err != nil {
				return err
			}
		}
		for _, g := range active {
			if listed[g] {
				continue
			}
			// A departure is durable: "left" refuses the former member's links.
			if err := tx.durable(ctx); err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `UPDATE group_members SET left_us = $1
				WHERE group_id = $2 AND user_id = $3 AND left_us = 0`, at, g, userID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record group members: %w", err)
	}
	return nil
}

// groupIDs is the groups userID is recorded in and has not left.
func groupIDs(ctx context.Context, tx conn, userID string) ([]string, error) {
	rows, err := tx.query(ctx, memberActiveQuery, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// GroupMembers lists at most limit current members of groupID seen since since, most
// recently seen first, and how many there are in all.
func (d *DB) GroupMembers(ctx context.Context, groupID string, since time.Time, limit int) ([]Member, int, error) {
	var total int
	if err := d.queryRow(ctx, memberCountQuery, groupID, micros(since)).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: count group members: %w", err)
	}
	rows, err := d.query(ctx, memberListQuery, groupID, micros(since), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list group members: %w", err)
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		m := Member{GroupID: groupID}
		var seen int64
		if err := rows.Scan(&m.UserID, &m.Name, &seen); err != nil {
			return nil, 0, fmt.Errorf("store: list group members: %w", err)
		}
		m.LastSeen = fromMicros(seen)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: list group members: %w", err)
	}
	return out, total, nil
}

// Membership is the record of userID in groupID, and whether there is one.
func (d *DB) Membership(ctx context.Context, groupID, userID string) (Member, bool, error) {
	m := Member{GroupID: groupID, UserID: userID}
	var seen, left int64
	err := d.queryRow(ctx, memberQuery, groupID, userID).Scan(&m.Name, &seen, &left)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, false, nil
	}
	if err != nil {
		return Member{}, false, fmt.Errorf("store: read group member: %w", err)
	}
	m.LastSeen = fromMicros(seen)
	if left != 0 {
		m.Left = fromMicros(left)
	}
	return m, true, nil
}

// MembersNamed returns the records in groupID of the users ids (a bounded list: the
// callers pass at most a page of members), by user id; users never seen are absent.
func (d *DB) MembersNamed(ctx context.Context, groupID string, ids []string) (map[string]Member, error) {
	out := make(map[string]Member, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	marks := make([]string, 0, len(ids))
	args = append(args, groupID)
	for i, id := range ids {
		args = append(args, id)
		marks = append(marks, "$"+strconv.Itoa(i+2))
	}
	rows, err := d.query(ctx, `SELECT user_id, name, last_seen_us, left_us FROM group_members
		WHERE group_id = $1 AND user_id IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read group members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m := Member{GroupID: groupID}
		var seen, left int64
		if err := rows.Scan(&m.UserID, &m.Name, &seen, &left); err != nil {
			return nil, fmt.Errorf("store: read group members: %w", err)
		}
		m.LastSeen = fromMicros(seen)
		if left != 0 {
			m.Left = fromMicros(left)
		}
		out[m.UserID] = m
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read group members: %w", err)
	}
	return out, nil
}
