package admin

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/fileshed/fileshed/core"
)

// changes runs `fileshed admin changes --user U [--since T] [--conversation C]`.
func (c *cli) changes(ctx context.Context, svc *core.Service, out io.Writer) error {
	a := c.Changes
	if !core.ValidID(a.User) {
		return fmt.Errorf("--user %q is not a valid user id", a.User)
	}
	rows, err := svc.AdminChanges(ctx, a.User, a.Conversation, a.Since)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tCONVERSATION\tTOOL\tZONE\tOP\tPATH\tUNDOABLE")
	for _, r := range rows {
		zone := r.Zone
		if r.Group != "" {
			zone += ":" + r.Group
		}
		p := fmt.Sprintf("%q", r.Path)
		if r.OldPath != "" {
			p = fmt.Sprintf("%q -> %q", r.OldPath, r.Path)
		}
		undo := "yes"
		switch {
		case r.Undone:
			undo = "undone"
		case !r.Undoable:
			undo = "no: " + r.Why
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Time.UTC().Format(time.RFC3339), r.Conversation, r.Tool, zone,
			r.Op, p, undo)
	}
	return tw.Flush()
}
