package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestSetOwnership(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		cases := []struct {
			name    string
			o       Ownership
			wantErr bool
		}{
			{name: "owner mode", o: Ownership{GroupID: "g", Path: "a.txt", Owner: "alice", Mode: "owner"}},
			{name: "group mode", o: Ownership{GroupID: "g", Path: "d/b.txt", Owner: "alice", Mode: "group"}},
			{name: "read-only mode", o: Ownership{GroupID: "g", Path: "c.txt", Owner: "alice", Mode: "owner_ro"}},
			{name: "unknown mode", o: Ownership{GroupID: "g", Path: "a.txt", Owner: "alice", Mode: "everyone"}, wantErr: true},
			{name: "mode case matters", o: Ownership{GroupID: "g", Path: "a.txt", Owner: "alice", Mode: "OWNER"}, wantErr: true},
			{name: "empty mode", o: Ownership{GroupID: "g", Path: "a.txt", Owner: "alice"}, wantErr: true},
			{name: "empty group", o: Ownership{Path: "a.txt", Owner: "alice", Mode: "owner"}, wantErr: true},
			{name: "empty path", o: Ownership{GroupID: "g", Owner: "alice", Mode: "owner"}, wantErr: true},
			{name: "empty owner", o: Ownership{GroupID: "g", Path: "a.txt", Mode: "owner"}, wantErr: true},
			{name: "quote and wildcard in path", o: Ownership{GroupID: "g", Path: "it's 100%_done.txt", Owner: "alice", Mode: "owner"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				tc.o.Created = t0
				err := d.SetOwnership(ctx, tc.o)
				if (err != nil) != tc.wantErr {
					t.Fatalf("SetOwnership = %v, want error %v", err, tc.wantErr)
				}
				got, ok, err := d.Ownership(ctx, tc.o.GroupID, tc.o.Path)
				if err != nil || ok == tc.wantErr || (ok && got != tc.o) {
					t.Errorf("Ownership = %+v, %v, %v; want %+v stored %v", got, ok, err, tc.o, !tc.wantErr)
				}
			})
		}
	})
}

func TestSetOwnershipUpsertKeepsCreated(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		first := Ownership{GroupID: "g", Path: "a.txt", Owner: "alice", Mode: "owner", Created: t0}
		second := Ownership{GroupID: "g", Path: "a.txt", Owner: "bob", Mode: "owner_ro", Created: t0.Add(time.Hour)}
		for _, o := range []Ownership{first, second} {
			if err := d.SetOwnership(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		got, _, _ := d.Ownership(ctx, "g", "a.txt")
		want := Ownership{GroupID: "g", Path: "a.txt", Owner: "bob", Mode: "owner_ro", Created: t0}
		if got != want {
			t.Errorf("after upsert %+v, want %+v", got, want)
		}
	})
}

// seedOwnership stores an "owner" record by alice for each path of each group.
func seedOwnership(t *testing.T, d *DB, groups map[string][]string) {
	t.Helper()
	for g, paths := range groups {
		for _, p := range paths {
			if err := d.SetOwnership(context.Background(), Ownership{GroupID: g, Path: p, Owner: "alice", Mode: "owner", Created: t0}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ownedPaths lists the paths with a record in group g, sorted.
func ownedPaths(t *testing.T, d *DB, g string) []string {
	t.Helper()
	rows, err := d.query(context.Background(), `SELECT path FROM ownership WHERE group_id = $1 ORDER BY path`, g)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestRenameOwnership(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		seed := []string{"a", "a/x.txt", "a/sub/y.txt", "ab/z.txt", "a.txt", "A/up.txt", "a_b/w.txt", "axb/v.txt", "b/old.txt", "b"}
		cases := []struct {
			name, from, to string
			want           []string
			wantErr        bool
		}{
			{name: "rename moves children", from: "a", to: "c",
				want: []string{"A/up.txt", "a.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt", "c", "c/sub/y.txt", "c/x.txt"}},
			{name: "single file", from: "a.txt", to: "d/e.txt",
				want: []string{"A/up.txt", "a", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt", "d/e.txt"}},
			{name: "target records are replaced", from: "a", to: "b",
				want: []string{"A/up.txt", "a.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/sub/y.txt", "b/x.txt"}},
			{name: "underscore is not a wildcard", from: "a_b", to: "q",
				want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt", "q/w.txt"}},
			{name: "case is exact", from: "A", to: "Q",
				want: []string{"Q/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt"}},
			// The renamed file replaced b, and a file without a record has no owner.
			{name: "unrecorded source clears the target", from: "nope", to: "b",
				want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt"}},
			{name: "onto itself is a no-op", from: "a", to: "a",
				want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt"}},
			{name: "into own descendant refused", from: "a", to: "a/sub", wantErr: true,
				want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt"}},
			{name: "onto own ancestor refused", from: "a/sub", to: "a", wantErr: true,
				want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt"}},
			{name: "empty source refused", from: "", to: "x", wantErr: true,
				want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "axb/v.txt", "b", "b/old.txt"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				seedOwnership(t, d, map[string][]string{"g": seed, "other": seed})
				err := d.RenameOwnership(context.Background(), "g", tc.from, tc.to)
				if (err != nil) != tc.wantErr {
					t.Fatalf("RenameOwnership = %v, want error %v", err, tc.wantErr)
				}
				if got := ownedPaths(t, d, "g"); !slices.Equal(got, tc.want) {
					t.Errorf("paths after rename:\n got %q\nwant %q", got, tc.want)
				}
				untouched := slices.Sorted(slices.Values(seed))
				if got := ownedPaths(t, d, "other"); !slices.Equal(got, untouched) {
					t.Errorf("another group's records changed: %q", got)
				}
			})
		}
	})
}

func TestRenameOwnershipKeepsOwnerAndMode(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		cases := []struct{ name, from, to, file string }{
			{"ascii", "dir", "dir2", "f.txt"},
			{"multibyte names", "dïr", "dïr€2", "ünï €.txt"},
			{"invalid UTF-8 names", "d\xff\xfe", "e\xc3", "\x80x.txt"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				ctx := context.Background()
				o := Ownership{GroupID: "g", Path: tc.from + "/" + tc.file, Owner: "bob", Mode: "owner_ro", Created: t0}
				if err := d.SetOwnership(ctx, o); err != nil {
					t.Fatal(err)
				}
				if err := d.RenameOwnership(ctx, "g", tc.from, tc.to); err != nil {
					t.Fatal(err)
				}
				o.Path = tc.to + "/" + tc.file
				got, ok, err := d.Ownership(ctx, "g", o.Path)
				if err != nil || !ok || got != o {
					t.Errorf("after rename %+v, %v, %v; want %+v (records: %q)", got, ok, err, o, ownedPaths(t, d, "g"))
				}
			})
		}
	})
}

func TestDeleteOwnership(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		seed := []string{"a", "a/x.txt", "a/sub/y.txt", "ab/z.txt", "a.txt", "A/up.txt", "a%/p.txt"}
		cases := []struct {
			name, path string
			want       []string
			wantErr    bool
		}{
			{name: "directory and children", path: "a", want: []string{"A/up.txt", "a%/p.txt", "a.txt", "ab/z.txt"}},
			{name: "single file", path: "a/x.txt", want: []string{"A/up.txt", "a", "a%/p.txt", "a.txt", "a/sub/y.txt", "ab/z.txt"}},
			{name: "percent is not a wildcard", path: "a%", want: []string{"A/up.txt", "a", "a.txt", "a/sub/y.txt", "a/x.txt", "ab/z.txt"}},
			{name: "missing path", path: "zzz", want: []string{"A/up.txt", "a", "a%/p.txt", "a.txt", "a/sub/y.txt", "a/x.txt", "ab/z.txt"}},
			{name: "empty path refused", path: "", wantErr: true,
				want: []string{"A/up.txt", "a", "a%/p.txt", "a.txt", "a/sub/y.txt", "a/x.txt", "ab/z.txt"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := openTest(t, drv)
				seedOwnership(t, d, map[string][]string{"g": seed, "other": seed})
				err := d.DeleteOwnership(context.Background(), "g", tc.path)
				if (err != nil) != tc.wantErr {
					t.Fatalf("DeleteOwnership = %v, want error %v", err, tc.wantErr)
				}
				if got := ownedPaths(t, d, "g"); !slices.Equal(got, tc.want) {
					t.Errorf("paths after delete:\n got %q\nwant %q", got, tc.want)
				}
				if got := ownedPaths(t, d, "other"); len(got) != len(seed) {
					t.Errorf("another group's records changed: %q", got)
				}
			})
		}
	})
}
