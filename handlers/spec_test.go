package handlers_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/handlers"
)

// TestSpecTouchesNoStorage: Spec builds, from the configuration alone, the very document a
// served server publishes (what Check and `fileshed openapi` rely on), without creating the
// storage directory; Check refuses a tool_descriptions name the model does not see the same
// way, before anything exists.
func TestSpecTouchesNoStorage(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_TOOL_DESCRIPTIONS": `{"shed_tree": "List a folder."}`, "FILESHED_MAX_FILE_SIZE_MB": "7"})
	var served map[string]any
	e.spec(&served)

	cfg := config(t, map[string]string{"FILESHED_TOOL_DESCRIPTIONS": `{"shed_tree": "List a folder."}`, "FILESHED_MAX_FILE_SIZE_MB": "7"})
	cfg.StorageBasePath = filepath.Join(t.TempDir(), "never")
	b, err := json.Marshal(handlers.Spec(cfg).OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var built map[string]any
	if err := json.Unmarshal(b, &built); err != nil {
		t.Fatal(err)
	}
	sb, _ := json.Marshal(served)
	bb, _ := json.Marshal(built)
	if string(sb) != string(bb) {
		t.Fatalf("Spec differs from the served document:\nserved %s\nspec   %s", sb[:min(len(sb), 400)], bb[:min(len(bb), 400)])
	}
	if err := handlers.Check(cfg); err != nil {
		t.Fatalf("Check refused a model-facing tool: %v", err)
	}
	cfg.ToolDescriptions = map[string]string{"shed_nope": "x"}
	if err := handlers.Check(cfg); err == nil {
		t.Fatal("Check accepted an unknown tool")
	}
	if _, err := os.Stat(cfg.StorageBasePath); !os.IsNotExist(err) {
		t.Fatalf("Spec or Check created the storage directory: %v", err)
	}
}
