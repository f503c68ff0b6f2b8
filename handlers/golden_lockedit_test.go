package handlers_test

import "testing"

// TestGoldenLockedit pins one answer per shape the locked-edit family builds: open,
// overwrite and append, exec in the working copy, save unversioned and committed, cancel,
// force_unlock of a held and of a free file.
func TestGoldenLockedit(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	a, b := conv("chat-a"), conv("chat-b")
	e.write("users/local/Storage/data/notes/a.txt", "one\ntwo\n")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "d.txt", "content": "doc\n"}, a))
	st := func(args map[string]any) map[string]any {
		args["zone"], args["path"] = "storage", "notes/a.txt"
		return args
	}
	doc := func(args map[string]any) map[string]any {
		args["zone"], args["path"] = "documents", "d.txt"
		return args
	}

	pinAnswer(t, "lockedit_open", e.post("shed_lockedit_open", st(map[string]any{}), a))
	pinAnswer(t, "lockedit_overwrite", e.post("shed_lockedit_overwrite", st(map[string]any{"content": "new\n"}), a))
	pinAnswer(t, "lockedit_append", e.post("shed_lockedit_overwrite", st(map[string]any{"content": "more\n", "append": true}), a))
	pinAnswer(t, "lockedit_exec", e.post("shed_lockedit_exec", st(map[string]any{"cmd": "wc", "args": []string{"-l", "."}}), a))
	pinAnswer(t, "lockedit_save", e.post("shed_lockedit_save", st(map[string]any{}), a))

	wantOK(t, e.post("shed_lockedit_open", doc(map[string]any{}), a))
	wantOK(t, e.post("shed_lockedit_overwrite", doc(map[string]any{"content": "changed\n"}), a))
	pinAnswer(t, "lockedit_save_documents", e.post("shed_lockedit_save", doc(map[string]any{}), a), "commit")

	wantOK(t, e.post("shed_lockedit_open", st(map[string]any{}), a))
	pinAnswer(t, "lockedit_cancel", e.post("shed_lockedit_cancel", st(map[string]any{}), a))

	wantOK(t, e.post("shed_lockedit_open", st(map[string]any{}), a))
	pinAnswer(t, "lockedit_force_unlock_held", e.post("shed_force_unlock", st(map[string]any{}), b), "since", "locked_at")
	pinAnswer(t, "lockedit_force_unlock_free", e.post("shed_force_unlock", st(map[string]any{}), b))
}
