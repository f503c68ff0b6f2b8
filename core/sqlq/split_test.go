package sqlq_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/sqlq"
)

func TestSingle(t *testing.T) {
	one := map[string]string{
		"SELECT 1":                      "SELECT 1",
		"SELECT 1;":                     "SELECT 1;",
		"SELECT 1; ;  \n":               "SELECT 1;",
		"SELECT 1; -- done":             "SELECT 1;",
		"SELECT 1; /* c */ -- x\n":      "SELECT 1;",
		"SELECT ';' AS \"a;b\"; ":       "SELECT ';' AS \"a;b\";",
		"SELECT 1 -- ; not a statement": "SELECT 1 -- ; not a statement",
		"CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES (1); DELETE FROM v; END;": "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES (1); DELETE FROM v; END;",
	}
	for q, want := range one {
		got, err := sqlq.Single(q)
		if err != nil || got != want {
			t.Errorf("Single(%q) = %q, %v; want %q", q, got, err, want)
		}
	}
	for _, q := range []string{"SELECT 1; DROP TABLE t", "SELECT 1;SELECT 2;", "BEGIN; DELETE FROM t; COMMIT", "SELECT ';'; ATTACH 'x' AS y"} {
		if _, err := sqlq.Single(q); !errors.Is(err, sqlq.ErrMultiple) {
			t.Errorf("Single(%q): %v, want ErrMultiple", q, err)
		}
	}
	for _, q := range []string{";", " ;; ", "-- c", "/* c */ ;", "\ufeff", "\ufeff -- x\n;"} {
		if _, err := sqlq.Single(q); !errors.Is(err, sqlq.ErrEmpty) {
			t.Errorf("Single(%q): %v, want ErrEmpty", q, err)
		}
	}
	if got, err := sqlq.Single("\ufeffSELECT 1"); err != nil || got != "SELECT 1" {
		t.Errorf("BOM + SELECT 1 = %q, %v", got, err)
	}
	// Many semicolons inside one string literal: bounded work, refused.
	if _, err := sqlq.Single("SELECT '" + strings.Repeat(";", 5000) + "'"); err == nil {
		t.Error("5000 semicolons in a literal: want a refusal")
	}
}
