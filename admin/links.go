package admin

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/fileshed/fileshed/core"
)

// links runs `fileshed admin links list|revoke`.
func (c *cli) links(ctx context.Context, cmd string, svc *core.Service, out io.Writer) error {
	if cmd == "links revoke <id>" {
		l, err := svc.AdminRevokeLink(ctx, c.Links.Revoke.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "revoked %s (%s, %s:%s)\n", l.ID, l.Owner, l.Zone, l.Path)
		return nil
	}
	ls, err := svc.AdminLinks(ctx, c.Links.List.User)
	if err != nil {
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tZONE\tPATH\tSTATE\tDOWNLOADS\tEXPIRES")
	for _, l := range ls {
		zone := l.Zone
		if l.GroupID != "" {
			zone += ":" + l.GroupID
		}
		limit := "∞"
		if l.MaxDownloads > 0 {
			limit = fmt.Sprint(l.MaxDownloads)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%q\t%s\t%d/%s\t%s\n", l.ID, l.Owner, zone, l.Path, l.State(now), l.Downloads, limit,
			l.Expires.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}
