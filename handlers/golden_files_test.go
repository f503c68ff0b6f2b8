package handlers_test

import (
	"slices"
	"strings"
	"testing"
)

// TestGoldenFiles pins one answer per shape the files family builds: every optional key
// (group, commit, offsets, cuts, invalid bytes, pdf pages) present once and absent once.
func TestGoldenFiles(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["local"]}`, "FILESHED_MAX_OUTPUT_DEFAULT": "200"})
	call := func(tool string, args map[string]any) reply { return e.post(tool, args, nil) }
	e.write("users/local/Storage/data/notes/a.txt", "one\ntwo\nthree\n")
	e.write("users/local/Storage/data/notes/b.txt", "")
	e.write("users/local/Storage/data/dos.txt", "x\r\ny\r\n")
	e.write("users/local/Storage/data/bin.dat", "\x00\x01\x02binary")
	e.write("users/local/Storage/data/a.gz", "\x1f\x8b\x08\x00")
	e.write("users/local/Storage/data/long.txt", strings.Repeat("line of text\n", 40)+"bad \xff\xfe end\n")
	e.write("users/local/Storage/data/wide.txt", "\xff"+strings.Repeat("é", 150)+" tail")
	e.write("users/local/Storage/data/report.pdf", string(textPDF(3, "hello")))
	wide := newPDF()
	wide.textPage(slices.Repeat([]string{strings.Repeat("dense ", 12)}, 10)...)
	e.write("users/local/Storage/data/big.pdf", string(wide.bytes()))
	e.write("groups/team/data/team.pdf", string(textPDF(1, "team")))

	pinAnswer(t, "files_tree", call("shed_tree", map[string]any{"zone": "storage"}))
	pinAnswer(t, "files_tree_empty", call("shed_tree", map[string]any{"zone": "documents"}))

	pinAnswer(t, "files_create", call("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": "hi\n"}))
	pinAnswer(t, "files_create_documents", call("shed_create_file", map[string]any{"zone": "documents", "path": "d.txt", "content": "a\nb\na\n"}), "commit")
	pinAnswer(t, "files_patch_text_pattern", call("shed_patch_text", map[string]any{"zone": "documents", "path": "d.txt",
		"content": "z", "position": "replace", "pattern": "a", "replace_all": true}), "commit")
	pinAnswer(t, "files_patch_text_group", call("shed_patch_text", map[string]any{"zone": "group", "group": "team", "path": "g.txt",
		"content": "group line\n", "overwrite": true}), "commit")
	pinAnswer(t, "files_patch_bytes_offset", call("shed_patch_bytes", map[string]any{"zone": "storage", "path": "new.txt",
		"content": "4142", "position": "at", "offset": 1}))
	pinAnswer(t, "files_patch_bytes_overwrite", call("shed_patch_bytes", map[string]any{"zone": "documents", "path": "raw.bin",
		"content": "AAEC", "content_format": "base64", "overwrite": true}), "commit")
	pinAnswer(t, "files_patch_bytes_group", call("shed_patch_bytes", map[string]any{"zone": "group", "group": "team", "path": "g.txt",
		"content": "0a"}), "commit")

	pinAnswer(t, "files_read", call("shed_read", map[string]any{"zone": "storage", "path": "notes/a.txt"}))
	pinAnswer(t, "files_read_range", call("shed_read", map[string]any{"zone": "storage", "path": "long.txt", "start_line": 2, "end_line": 3}))
	pinAnswer(t, "files_read_cut_invalid", call("shed_read", map[string]any{"zone": "storage", "path": "long.txt"}))
	pinAnswer(t, "files_read_group", call("shed_read", map[string]any{"zone": "group", "group": "team", "path": "g.txt"}))
	pinAnswer(t, "files_read_offset", call("shed_read", map[string]any{"zone": "storage", "path": "notes/a.txt", "offset": 4}))
	pinAnswer(t, "files_read_offset_next_invalid", call("shed_read", map[string]any{"zone": "storage", "path": "wide.txt", "offset": 2}))
	pinAnswer(t, "files_read_offset_group", call("shed_read", map[string]any{"zone": "group", "group": "team", "path": "g.txt", "offset": 0}))
	pinAnswer(t, "files_read_bytes", call("shed_read_bytes", map[string]any{"zone": "storage", "path": "bin.dat"}))
	pinAnswer(t, "files_read_bytes_offset_truncated", call("shed_read_bytes", map[string]any{"zone": "storage", "path": "long.txt",
		"offset": 3, "output_format": "base64"}))
	pinAnswer(t, "files_read_bytes_group", call("shed_read_bytes", map[string]any{"zone": "group", "group": "team", "path": "g.txt"}))

	needPoppler(t)
	pinAnswer(t, "files_read_pdf", call("shed_read", map[string]any{"zone": "storage", "path": "report.pdf", "pages": "1-3"}))
	pinAnswer(t, "files_read_pdf_next", call("shed_read", map[string]any{"zone": "storage", "path": "report.pdf", "pages": "1-1"}))
	pinAnswer(t, "files_read_pdf_group", call("shed_read", map[string]any{"zone": "group", "group": "team", "path": "team.pdf"}))
	pinAnswer(t, "files_read_pdf_page_cut", call("shed_read", map[string]any{"zone": "storage", "path": "big.pdf"}))

	for _, c := range []struct{ name, path string }{{"directory", "notes"}, {"text", "notes/a.txt"}, {"empty", "notes/b.txt"},
		{"binary", "bin.dat"}, {"compressed", "a.gz"}, {"pdf", "report.pdf"}, {"dos", "dos.txt"}} {
		pinAnswer(t, "files_file_type_"+c.name, call("shed_file_type", map[string]any{"zone": "storage", "path": c.path}))
	}
	pinAnswer(t, "files_hexdump", call("shed_hexdump", map[string]any{"zone": "storage", "path": "bin.dat", "length": 4}))
	pinAnswer(t, "files_hexdump_beyond", call("shed_hexdump", map[string]any{"zone": "storage", "path": "bin.dat", "offset": 100}))

	pinAnswer(t, "files_convert_eol_unchanged", call("shed_convert_eol", map[string]any{"zone": "storage", "path": "notes/a.txt"}))
	pinAnswer(t, "files_convert_eol", call("shed_convert_eol", map[string]any{"zone": "storage", "path": "dos.txt"}))
	pinAnswer(t, "files_convert_eol_documents", call("shed_convert_eol", map[string]any{"zone": "documents", "path": "d.txt", "to": "dos"}), "commit")

	pinAnswer(t, "files_rename", call("shed_rename", map[string]any{"zone": "storage", "old_path": "new.txt", "new_path": "renamed.txt"}))
	pinAnswer(t, "files_rename_documents", call("shed_rename", map[string]any{"zone": "documents", "old_path": "d.txt", "new_path": "e.txt"}), "commit")
	pinAnswer(t, "files_delete_folder", call("shed_delete", map[string]any{"zone": "storage", "path": "notes"}))
	pinAnswer(t, "files_delete_documents", call("shed_delete", map[string]any{"zone": "documents", "path": "e.txt"}), "commit")
}
