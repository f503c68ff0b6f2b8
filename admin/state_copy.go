package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
)

// stateCopy copies the storage's SQLite state into the empty PostgreSQL database of to (or
// of the URL in the file toFile) and prints each table's rows.
func stateCopy(ctx context.Context, cfg *valves.Config, to, toFile string, out io.Writer) error {
	if (to == "") == (toFile == "") {
		return errors.New("state-copy needs the target database: --to postgres://... or --to-file FILE")
	}
	if toFile != "" {
		b, err := os.ReadFile(toFile)
		if err != nil {
			return fmt.Errorf("--to-file: %w", err)
		}
		to = strings.TrimSpace(string(b))
	}
	base, err := filepath.Abs(cfg.StorageBasePath)
	if err != nil {
		return err
	}
	rep, err := core.StateCopy(ctx, base, to)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS")
	for _, t := range rep.Tables {
		fmt.Fprintf(tw, "%s\t%d\n", t.Table, t.Rows)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "copied the state of %s into PostgreSQL (every table's rows counted in the target); "+
		"start the replicas with state.driver postgres and this state.url\n", base)
	return nil
}
