package core

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/store"
)

// TestTxTable is the write transaction's own table (issue 35 item 5): every operation
// (create, overwrite, remove, rename) in every zone kind (Storage, Documents, a group space,
// Uploads) under every condition (none; the path locked by another conversation; a group
// file of another member in mode owner; a protected name; over the quota) either changes
// the disk — committed in a versioned zone, one journal row — or is refused with its code
// and changes nothing.
func TestTxTable(t *testing.T) {
	t.Parallel()
	s, base := testService(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"]}`,
		"FILESHED_QUOTA_PER_USER_MB": "1", "FILESHED_QUOTA_PER_GROUP_MB": "1"})
	ctx := context.Background()
	alice, bob := Caller{UserID: "alice", ConvID: "c1"}, Caller{UserID: "bob", ConvID: "c2"}
	ops := []string{"create", "overwrite", "remove", "rename"}
	conds := []string{"none", "locked", "owner", "protected", "quota"}
	zones := map[string]string{"storage": "users/alice/Storage/data", "documents": "users/alice/Documents/data",
		"group": "groups/team/data", "uploads": ""}
	want := func(zone, op, cond string) Code {
		switch {
		case zone == "uploads":
			return ZoneReadonly
		case cond == "locked" && op != "create": // an edit lock is taken on a file that exists
			return FileLocked
		case cond == "owner" && zone == "group" && op == "overwrite":
			return FileOwnerOnly
		case cond == "owner" && zone == "group" && op != "create":
			return PermissionDenied // removed or moved away
		case cond == "protected" && (zone != "storage" || op == "remove"):
			return ProtectedPath
		case cond == "quota" && (op == "create" || op == "overwrite"):
			return QuotaExceeded
		}
		return ""
	}
	n := 0
	for zone, data := range zones {
		for _, op := range ops {
			for _, cond := range conds {
				n++
				name := zone + "/" + op + "/" + cond
				dir := "t" + strings.ReplaceAll(name, "/", "-") // its own folder of the zone
				t.Run(name, func(t *testing.T) {
					group := map[bool]string{true: "team"}[zone == "group"]
					z, err := s.ResolveZone(ctx, alice, zone, group, true)
					if code := want(zone, op, cond); zone == "uploads" {
						wantCode(t, err, code)
						return
					}
					must(t, err)
					defer z.Close()
					p, size := dir+"/f.txt", int64(5)
					if cond == "protected" {
						p = dir + "/.git/config"
						if zone == "storage" && op == "remove" {
							p = ".git" // the clone at the top of a zone is kept in every zone
						}
					}
					if cond == "quota" {
						size = 2 << 20
					}
					if op != "create" { // the file exists, written by bob
						must(t, z.fs.MkdirAll(path.Dir(p), 0o700))
						_, err := z.fs.WriteAtomic(p, strings.NewReader("bob's"), 0o600)
						must(t, err)
						if zone == "group" {
							mode := map[bool]string{true: "owner", false: "group"}[cond == "owner"]
							must(t, s.RecordGroupFiles(ctx, bob, z, mode, p))
						}
						if z.Versioned {
							_, err := s.Mutate(ctx, bob, z, "t", "", func() (Change, error) { return Change{Paths: []string{p}}, nil })
							must(t, err)
						}
					}
					if cond == "locked" {
						_, err := s.db.AcquireLock(ctx, store.Lock{ZoneKey: zoneKey(z), Path: p, UserID: "bob", ConvID: "c2"}, s.LockMaxAge())
						must(t, err)
					}
					before := treeOf(t, filepath.Join(base, data))
					hash, err := txOp(ctx, s, alice, z, op, p, size)
					code := want(zone, op, cond)
					if code != "" {
						wantCode(t, err, code)
						if after := treeOf(t, filepath.Join(base, data)); after != before {
							t.Fatalf("refused, yet the disk changed:\n%s\n%s", before, after)
						}
						return
					}
					must(t, err)
					if after := treeOf(t, filepath.Join(base, data)); after == before {
						t.Fatalf("applied, yet the disk is as before:\n%s", after)
					}
					if z.Versioned != (hash != "") {
						t.Fatalf("versioned %v, commit %q", z.Versioned, hash)
					}
					rows, err := s.db.Journal(ctx, store.JournalQuery{UserID: "alice", ConvID: "c1", Path: p, Limit: 10})
					must(t, err)
					if len(rows) == 0 {
						t.Fatal("the change has no journal row")
					}
				})
			}
		}
	}
	if n != len(zones)*len(ops)*len(conds) {
		t.Fatalf("%d cases", n)
	}
}

// txOp runs op on p of z through the transaction, as the families do.
func txOp(ctx context.Context, s *Service, c Caller, z *Zone, op, p string, size int64) (string, error) {
	switch op {
	case "create", "overwrite":
		tx, _, err := s.BeginWrite(ctx, c, z, p, p, Edit{Tool: "t", Mode: "group"})
		if err != nil {
			return "", err
		}
		defer tx.Close()
		return tx.WriteFile(Write{Size: size, Body: strings.NewReader(strings.Repeat("x", int(size)))})
	case "remove":
		tx, err := s.Begin(ctx, c, Edit{Tool: "t", Steps: []Step{{Zone: z, Path: p, Op: OpRemove}}, Quota: &Quota{Size: -1}})
		if err != nil {
			return "", err
		}
		defer tx.Close()
		return tx.Apply(func() (Change, error) {
			return Change{Paths: []string{p}, Growth: Amount{Bytes: -5, Files: -1}}, tx.Fs(z).RemoveAll(p)
		})
	}
	to := path.Dir(p) + "/renamed.txt"
	tx, err := s.Begin(ctx, c, Edit{Tool: "t", Steps: []Step{{Zone: z, Path: p, Op: OpMoveFrom}, {Zone: z, Path: to, Op: OpMoveTo}},
		Quota: &Quota{Size: -1}})
	if err != nil {
		return "", err
	}
	defer tx.Close()
	return tx.Apply(func() (Change, error) {
		return Change{Paths: []string{p, to}}, tx.Fs(z).Rename(p, to)
	})
}

// treeOf lists the entries below dir with their modes and contents ("" when dir is absent).
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			content := ""
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				content = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
			}
			b.WriteString(strings.TrimPrefix(p, dir) + " " + fi.Mode().String() + " " + content + "\n")
		}
		return nil
	})
	return b.String()
}
