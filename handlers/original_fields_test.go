package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// The original's fields and codes (issue 28, FUNCTIONS.md: names, data fields and error
// codes carry over).

// TestEncryptionStatusOriginalFields: shed_encryption status answers the original's fields
// (reference §5.38) beside ours, with its four states; migrate counts files_encrypted.
func TestEncryptionStatusOriginalFields(t *testing.T) {
	t.Parallel()
	status := func(e *env) map[string]any {
		t.Helper()
		r := e.post("shed_encryption", map[string]any{"action": "status"}, nil)
		wantOK(t, r)
		for _, k := range []string{"status", "status_message", "database_enabled", "key_configured", "files_encrypted",
			"files_unencrypted", "files_total", "crypto_available", "available", "zones"} {
			if _, ok := r.Data[k]; !ok {
				t.Fatalf("status has no %s: %s", k, r.raw)
			}
		}
		if r.Message != r.Data["status_message"] {
			t.Fatalf("message is not status_message: %s", r.raw)
		}
		return r.Data
	}
	want := func(d map[string]any, st string, db, key bool, enc, plain float64) {
		t.Helper()
		if d["status"] != st || d["database_enabled"] != db || d["key_configured"] != key ||
			d["files_encrypted"] != enc || d["files_unencrypted"] != plain || d["files_total"] != enc+plain {
			t.Fatalf("want %s db=%v key=%v %v+%v: %v", st, db, key, enc, plain, d)
		}
	}
	none := start(t, nil)
	none.write(zoneDir+"a.txt", "a")
	d := status(none)
	want(d, "disabled", false, false, 0, 1)
	if d["crypto_available"] != false {
		t.Fatalf("no master key, crypto_available: %v", d)
	}

	e := start(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	e.write(zoneDir+"old.txt", "old")
	want(status(e), "not_setup", false, true, 0, 1)
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": "new"}, nil))
	want(status(e), "active", true, true, 1, 1)
	m := e.post("shed_encryption", map[string]any{"action": "migrate"}, nil)
	wantOK(t, m)
	if m.Data["files_encrypted"] != 1.0 || m.Data["files_skipped"] != 1.0 || m.Data["files_changed"] != 1.0 {
		t.Fatalf("migrate: %s", m.raw)
	}
	want(status(e), "active", true, true, 2, 0)

	// The server restarted without its master key: set up, but the key is missing.
	cfg := e.restartConfig(t, nil)
	e.stop()
	d = status(serve(t, cfg))
	want(d, "key_missing", true, false, 2, 0)
}

// TestLinkDeleteUnknownOrTwice: deleting an id that never was a link, or a link already
// deleted, is LINK_NOT_FOUND: the model is never told twice that it deleted something.
func TestLinkDeleteUnknownOrTwice(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/a.txt", "a")
	wantError(t, e.post("shed_link_delete", map[string]any{"link_id": "3f2b1c9e-1111-2222-3333-444455556666"}, as("alice")), "LINK_NOT_FOUND")
	wantError(t, e.post("shed_link_delete", map[string]any{"file_id": "nope"}, as("alice")), "LINK_NOT_FOUND")
	id := e.link("alice", map[string]any{"zone": "storage", "path": "a.txt"})["link_id"]
	wantOK(t, e.post("shed_link_delete", map[string]any{"link_id": id}, as("alice")))
	r := e.post("shed_link_delete", map[string]any{"link_id": id}, as("alice"))
	wantError(t, r, "LINK_NOT_FOUND")
	if strings.Contains(r.Message, "deleted") {
		t.Fatalf("second delete: %s", r.raw)
	}
}

// TestLinkListShowsWhatDownloadDoes: a link whose download answers 410 (its file was
// replaced since) is not listed active, and has no url.
func TestLinkListShowsWhatDownloadDoes(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/a.txt", "first")
	url := e.link("alice", map[string]any{"zone": "storage", "path": "a.txt"})["url"].(string)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": "second!", "overwrite": true}, as("alice")))
	if g := e.get("GET", url, nil); g.status != http.StatusGone {
		t.Fatalf("download of a replaced file: %d", g.status)
	}
	l := e.post("shed_link_list", nil, as("alice"))
	x := l.Data["links"].([]any)[0].(map[string]any)
	if x["state"] != "changed" || x["url"] != nil {
		t.Fatalf("list entry of a link that answers 410: %v", x)
	}
}
