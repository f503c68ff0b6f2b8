package admin_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// inlineRow is the id and inline before-image of the overwrite of p in the state database
// of base (a test failure when that image is not inline).
func inlineRow(t *testing.T, base, p string) (db *sql.DB, id int64, image string, data []byte) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(base, "fileshed.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.QueryRow(`SELECT id, image, image_data FROM journal WHERE path = $1 AND op = 'write'`, p).Scan(&id, &image, &data); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(image, "inline:") || len(data) == 0 {
		t.Fatalf("%s's image: %q, %d bytes, want one inline", p, image, len(data))
	}
	return db, id, image, data
}

// damageInline rewrites the inline before-image of the overwrite of p (state database of
// base) with what damage makes of its bytes, and returns the row's image and change.
func damageInline(t *testing.T, base, p string, damage func([]byte) []byte) string {
	t.Helper()
	db, id, image, data := inlineRow(t, base, p)
	if _, err := db.Exec(`UPDATE journal SET image_data = $1 WHERE id = $2`, damage(data), id); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s (change %d)", image, id)
}

// TestAdminVerifyInlineJournalImages: a small file's before-image is held by its journal row;
// verify reads each one: sound ones pass; plain bytes that no longer hash to the image's name,
// or sealed bytes with a byte flipped (encrypted Storage), are each a problem naming the image
// and its change (exit 1).
func TestAdminVerifyInlineJournalImages(t *testing.T) {
	t.Parallel()
	for _, sealed := range []bool{false, true} {
		base := t.TempDir()
		cfg := config(t, base)
		if sealed {
			cfg.Encryption.MasterKey = "admin-test-master-key-0123456789abcdef"
		}
		l := serveWith(t, cfg)
		if sealed {
			l.ok(t, "shed_encryption", map[string]any{"action": "setup"})
		}
		for _, f := range [][2]string{{"a.txt", "first a"}, {"a.txt", "second a"}, {"b.txt", "first b"}, {"b.txt", "second b"}} {
			l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": f[0], "content": f[1], "overwrite": true})
		}
		l.close()
		if code, out, errOut := runWith(t, cfg, "verify"); code != 0 || strings.Contains(out, "journal_images") {
			t.Fatalf("sealed %v: verify of sound inline images: %d %s %s", sealed, code, out, errOut)
		}
		want := `: damaged (its content does not match its hash)"`
		damage := func(b []byte) []byte { return []byte("first A") }
		if sealed {
			want = `: damaged (it does not decrypt)"`
			damage = func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b }
		}
		image := damageInline(t, base, "a.txt", damage)
		code, out, _ := runWith(t, cfg, "verify")
		for _, w := range []string{`"user local": [`, `"` + image + want, `"problems": 1`} {
			if !strings.Contains(out, w) {
				t.Errorf("sealed %v: verify lacks %s:\n%s", sealed, w, out)
			}
		}
		if code != 1 {
			t.Errorf("sealed %v: verify with a damaged inline image: exit %d", sealed, code)
		}
	}
}

// TestAdminBackupRestoresInlineImages: the inline before-images are in the state database,
// so a backup carries them: after a restore elsewhere, verify finds them sound and the
// overwrite of a small file is undone from its row.
func TestAdminBackupRestoresInlineImages(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "n.txt", "content": "kept by the backup\n"})
	l.ok(t, "shed_create_file", map[string]any{"zone": "storage", "path": "n.txt", "content": "overwritten\n", "overwrite": true})
	l.close()
	backup := filepath.Join(t.TempDir(), "backup")
	if code, out, errOut := run(t, base, "backup", backup); code != 0 {
		t.Fatalf("backup: %s %s", out, errOut)
	}
	target := t.TempDir()
	if code, out, errOut := run(t, target, "restore", backup); code != 0 {
		t.Fatalf("restore: %s %s", out, errOut)
	}
	if _, _, _, data := inlineRow(t, target, "n.txt"); string(data) != "kept by the backup\n" {
		t.Fatalf("the restored row's image: %q", data)
	}
	if code, out, errOut := run(t, target, "verify"); code != 0 {
		t.Fatalf("verify of the restored storage: %s %s", out, errOut)
	}
	r := serve(t, target)
	changes := r.call(t, "shed_version", map[string]any{"action": "changes"}, "")
	list, _ := changes["data"].(map[string]any)["changes"].([]any)
	if len(list) != 2 {
		t.Fatalf("changes after the restore: %v", changes)
	}
	// force: a restore makes new files, whose identity (device, inode) is not the one the
	// journal recorded, so every path counts as changed outside the journal.
	r.ok(t, "shed_version", map[string]any{"action": "undo", "change_id": list[0].(map[string]any)["id"], "force": true})
	got := r.call(t, "shed_read", map[string]any{"zone": "storage", "path": "n.txt"}, "")
	if !strings.Contains(fmt.Sprint(got["data"]), "kept by the backup") {
		t.Fatalf("after the undo on the restored storage: %v", got)
	}
}
