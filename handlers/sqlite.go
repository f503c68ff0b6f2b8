package handlers

import "github.com/danielgtaylor/huma/v2"

// registerSQLite registers shed_sqlite: one SQL statement, a CSV export, or a CSV import.
func registerSQLite(api huma.API, d Deps) {
	tool(api, d, toolSpec{name: "shed_sqlite", hints: destructive, summary: "SQLite query or CSV import",
		description: "One SQL statement on a SQLite file, or import_csv to a table (guide csv_to_sqlite)"}, d.Tools.SQLite.SQLite)
}
