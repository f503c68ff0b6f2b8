package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// step is one tool call of a recipe.
type step struct {
	tool string
	body map[string]any
}

// recipe makes, on a fresh server (mode none, user "local", group "team"), the commit of one
// row of the README's commit table: files written straight to disk (storage-relative), setup
// calls, then the call whose arguments fill the row's template; the commit is read from the
// history of Documents, or of the group team when group is set.
type recipe struct {
	disk  map[string]string
	setup []step
	call  step
	group bool
}

func doc(path, content string) step {
	return step{"shed_create_file", map[string]any{"zone": "documents", "path": path, "content": content}}
}

// commitRecipes holds a recipe per row of the README's commit table, keyed by its call column.
var commitRecipes = map[string]recipe{
	"shed_create_file": {call: doc("c.md", "a\n")},
	"shed_patch_text": {setup: []step{doc("pt.md", "a\n")},
		call: step{"shed_patch_text", map[string]any{"zone": "documents", "path": "pt.md", "content": "b\n", "position": "start"}}},
	"shed_patch_bytes": {call: step{"shed_patch_bytes", map[string]any{"zone": "documents", "path": "pb.bin", "content": "00ff", "position": "end"}}},
	"shed_convert_eol": {setup: []step{doc("eol.txt", "a\n")},
		call: step{"shed_convert_eol", map[string]any{"zone": "documents", "path": "eol.txt", "to": "dos"}}},
	"shed_delete": {setup: []step{doc("del.txt", "a\n")},
		call: step{"shed_delete", map[string]any{"zone": "documents", "path": "del.txt"}}},
	"shed_rename": {setup: []step{doc("ren.txt", "a\n")},
		call: step{"shed_rename", map[string]any{"zone": "documents", "old_path": "ren.txt", "new_path": "renamed.txt"}}},
	`shed_transfer(action="uploads_to_documents")`: {disk: map[string]string{"users/local/Uploads/unknown/up.txt": "a\n"},
		call: step{"shed_transfer", map[string]any{"action": "uploads_to_documents", "src": "up.txt", "dest": "up.txt"}}},
	`shed_transfer(action="storage_to_documents")`: {
		setup: []step{{"shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "a\n"}}},
		call:  step{"shed_transfer", map[string]any{"action": "storage_to_documents", "src": "s.txt", "dest": "s2.txt"}}},
	`shed_transfer(action="documents_to_storage")`: {setup: []step{doc("d2s.txt", "a\n")},
		call: step{"shed_transfer", map[string]any{"action": "documents_to_storage", "src": "d2s.txt", "dest": "d2s.txt"}}},
	`shed_transfer(action="to_group")`: {group: true,
		setup: []step{{"shed_create_file", map[string]any{"zone": "storage", "path": "g.txt", "content": "a\n"}}},
		call:  step{"shed_transfer", map[string]any{"action": "to_group", "src_zone": "storage", "src_path": "g.txt", "group": "team", "dest_path": "g.txt"}}},
	`shed_archive(action="zip")`: {setup: []step{doc("zsrc/a.txt", "a\n")},
		call: step{"shed_archive", map[string]any{"action": "zip", "zone": "documents", "src": "zsrc", "dest": "z.zip"}}},
	`shed_archive(action="unzip")`: {setup: []step{doc("uzsrc/a.txt", "a\n"),
		{"shed_archive", map[string]any{"action": "zip", "zone": "documents", "src": "uzsrc", "dest": "uz.zip"}}},
		call: step{"shed_archive", map[string]any{"action": "unzip", "zone": "documents", "src": "uz.zip", "dest": "uz"}}},
	`shed_version(action="restore")`: {setup: []step{doc("r.txt", "1\n"), doc("r.txt", "2\n")},
		call: step{"shed_version", map[string]any{"action": "restore", "zone": "documents", "path": "r.txt", "version": "HEAD~1"}}},
	`shed_lockedit(action="save")`: {setup: []step{doc("le.txt", "a\n"),
		{"shed_lockedit", map[string]any{"action": "open", "zone": "documents", "path": "le.txt"}},
		{"shed_lockedit", map[string]any{"action": "overwrite", "zone": "documents", "path": "le.txt", "content": "b\n"}}},
		call: step{"shed_lockedit", map[string]any{"action": "save", "zone": "documents", "path": "le.txt"}}},
	"shed_exec": {setup: []step{doc("ex.txt", "a\n")},
		call: step{"shed_exec", map[string]any{"zone": "documents", "cmd": "cp", "args": []string{"ex.txt", "ex2.txt"}}}},
	`shed_sqlite(query="…")`: {call: step{"shed_sqlite", map[string]any{"zone": "documents", "path": "q.db", "query": "CREATE TABLE t (a INTEGER)"}}},
	`shed_sqlite(import_csv="…")`: {setup: []step{doc("in.csv", "a,b\n1,x\n")},
		call: step{"shed_sqlite", map[string]any{"zone": "documents", "path": "i.db", "import_csv": "in.csv", "table": "t"}}},
	`shed_sqlite(output_csv="…")`: {
		setup: []step{{"shed_sqlite", map[string]any{"zone": "documents", "path": "e.db", "query": "CREATE TABLE t (a INTEGER)"}}},
		call:  step{"shed_sqlite", map[string]any{"zone": "documents", "path": "e.db", "query": "SELECT 1", "output_csv": "e.csv"}}},
	"shed_save_page": {call: step{"shed_save_page", map[string]any{"zone": "documents", "title": "Report", "content": "hi"}}},
	`shed_info(action="maintenance")`: {disk: map[string]string{"users/local/Documents/data/left.txt": "a\n"},
		call: step{"shed_info", map[string]any{"action": "maintenance"}}},
}

// TestReadmeCommitMessages makes each row's commit on the real server and compares the
// message in the history with the row's template, filled with the call's arguments.
func TestReadmeCommitMessages(t *testing.T) {
	rows := commitRows(t)
	storage := t.TempDir()
	// best_effort: the commit of a command is the point here, not its confinement.
	s := serveBinaryOn(t, storage, `FILESHED_GROUPS_STATIC={"team":["local"]}`, "FILESHED_EXEC_SANDBOX=best_effort")
	post := func(st step) map[string]any {
		t.Helper()
		body, _ := json.Marshal(st.body)
		resp, err := http.Post("http://"+s.addr+"/"+st.tool, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env["success"] != true {
			t.Fatalf("%s %s: %v %v", st.tool, body, err, env)
		}
		return env
	}
	placeholder := regexp.MustCompile(`<([a-z_]+)>`)
	seen := map[string]bool{}
	for _, r := range rows {
		rec, ok := commitRecipes[r.cell]
		if !ok {
			t.Errorf("README commit table: no recipe for %s", r.cell)
			continue
		}
		seen[r.cell] = true
		if rec.call.tool != r.call.tool {
			t.Fatalf("recipe of %s calls %s", r.cell, rec.call.tool)
		}
		for name, v := range r.call.args { // the row's arguments are the call's ("…": any value)
			if got, ok := rec.call.body[name]; !ok || v != "…" && got != v {
				t.Fatalf("recipe of %s: %s = %v", r.cell, name, got)
			}
		}
		for rel, content := range rec.disk {
			p := filepath.Join(storage, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, st := range rec.setup {
			post(st)
		}
		post(rec.call)
		want := placeholder.ReplaceAllStringFunc(r.template, func(m string) string {
			switch v := rec.call.body[m[1:len(m)-1]].(type) {
			case nil:
				t.Errorf("README commit table: %s names %s, which the call does not give", r.cell, m)
				return m
			case []string:
				return strings.Join(v, " ")
			default:
				return fmt.Sprint(v)
			}
		})
		history := map[string]any{"action": "history", "zone": "documents", "limit": 1}
		if rec.group {
			history = map[string]any{"action": "history", "zone": "group", "group": "team", "limit": 1}
		}
		entries, _ := post(step{"shed_version", history})["data"].(map[string]any)["entries"].([]any)
		if len(entries) != 1 {
			t.Fatalf("%s: no commit", r.cell)
		}
		if got := entries[0].(map[string]any)["message"]; got != want {
			t.Errorf("%s commits %q; the README says %q", r.cell, got, want)
		}
	}
	for cell := range commitRecipes {
		if !seen[cell] {
			t.Errorf("recipe %s has no row in the README's commit table", cell)
		}
	}
}
