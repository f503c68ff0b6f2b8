package sqlq

import (
	"strings"
	"sync"

	sqlite "modernc.org/sqlite"
)

// policy is the authorizer of a connection. SQLite calls decide while it compiles every
// statement (including the statements inside views and triggers it expands), so what it
// refuses cannot run whatever the SQL text looks like.
type policy struct {
	mu       sync.Mutex
	readOnly bool
	// internal lets our own maintenance statements through (Checkpoint).
	internal bool
	denial   *Denial
}

// readPragmas are the PRAGMAs a model may run: they only read (with an argument, they
// name a table or an index, or bound a check).
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true, "integrity_check": true,
	"quick_check": true, "collation_list": true, "function_list": true, "module_list": true, "pragma_list": true,
	"compile_options": true,
}

// valuePragmas may be read but not set (no argument).
var valuePragmas = map[string]bool{
	"page_size": true, "page_count": true, "freelist_count": true, "user_version": true, "application_id": true,
	"schema_version": true, "encoding": true, "journal_mode": true, "foreign_keys": true, "data_version": true,
	"auto_vacuum": true, "max_page_count": true,
}

// deniedFunctions can reach the host or the process: loading code, or registering a
// tokenizer by pointer.
var deniedFunctions = map[string]bool{"load_extension": true, "fts3_tokenizer": true}

// modules are the virtual table modules a model may create (full-text search, R-tree).
var modules = map[string]bool{"fts3": true, "fts4": true, "fts5": true, "rtree": true}

// writes are the actions that change the database.
var writes = map[sqlite.AuthorizerActionCode]string{
	sqlite.AuthCreateIndex: "CREATE INDEX", sqlite.AuthCreateTable: "CREATE TABLE", sqlite.AuthCreateTrigger: "CREATE TRIGGER",
	sqlite.AuthCreateView: "CREATE VIEW", sqlite.AuthCreateTempIndex: "CREATE INDEX", sqlite.AuthCreateTempTable: "CREATE TABLE",
	sqlite.AuthCreateTempTrigger: "CREATE TRIGGER", sqlite.AuthCreateTempView: "CREATE VIEW", sqlite.AuthDelete: "DELETE",
	sqlite.AuthDropIndex: "DROP INDEX", sqlite.AuthDropTable: "DROP TABLE", sqlite.AuthDropTrigger: "DROP TRIGGER",
	sqlite.AuthDropView: "DROP VIEW", sqlite.AuthDropTempIndex: "DROP INDEX", sqlite.AuthDropTempTable: "DROP TABLE",
	sqlite.AuthDropTempTrigger: "DROP TRIGGER", sqlite.AuthDropTempView: "DROP VIEW", sqlite.AuthInsert: "INSERT",
	sqlite.AuthUpdate: "UPDATE", sqlite.AuthAlterTable: "ALTER TABLE", sqlite.AuthReindex: "REINDEX",
	sqlite.AuthAnalyze: "ANALYZE", sqlite.AuthCreateVTable: "CREATE VIRTUAL TABLE", sqlite.AuthDropVTable: "DROP VIRTUAL TABLE",
}

// decide is the AuthorizerFn.
func (p *policy) decide(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.internal {
		return sqlite.AuthorizerOK
	}
	what, write := p.check(action, arg1, arg2)
	if what == "" {
		return sqlite.AuthorizerOK
	}
	if p.denial == nil {
		p.denial = &Denial{What: what, Write: write}
	}
	return sqlite.AuthorizerDeny
}

// check names what action would do when it must be refused ("" = allowed) and whether it
// is refused only as a write to a read-only database.
func (p *policy) check(action sqlite.AuthorizerActionCode, arg1, arg2 string) (string, bool) {
	switch action {
	case sqlite.AuthAttach:
		return "ATTACH", false
	case sqlite.AuthDetach:
		return "DETACH", false
	case sqlite.AuthFunction:
		if deniedFunctions[strings.ToLower(arg2)] {
			return "function " + strings.ToLower(arg2), false
		}
		return "", false
	case sqlite.AuthPragma:
		name := strings.ToLower(arg1)
		if readPragmas[name] || (valuePragmas[name] && arg2 == "") {
			return "", false
		}
		return "PRAGMA " + name, false
	case sqlite.AuthCreateVTable, sqlite.AuthDropVTable:
		if !modules[strings.ToLower(arg2)] {
			return "virtual table module " + arg2, false
		}
	}
	if w, ok := writes[action]; ok && p.readOnly {
		return w, true
	}
	return "", false
}

// take returns and clears the first denial since the last take.
func (p *policy) take() (Denial, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.denial
	p.denial = nil
	if d == nil {
		return Denial{}, false
	}
	return *d, true
}
