package core

// Codes of shed_sqlite. DB_ERROR, TABLE_EXISTS and the CSV codes are the original's;
// SQL_FORBIDDEN is ours (FUNCTIONS.md: an authorizer refusal). An SQL statement that fails
// is EXEC_ERROR, as in the original; DB_ERROR says the file is not a usable database.
const (
	DBError       Code = "DB_ERROR"
	TableExists   Code = "TABLE_EXISTS"
	CSVEmpty      Code = "CSV_EMPTY"
	CSVParseError Code = "CSV_PARSE_ERROR"
	CSVTooWide    Code = "CSV_TOO_WIDE"
	SQLForbidden  Code = "SQL_FORBIDDEN"
)

func init() {
	addHints(map[Code]string{
		DBError:       "The file is not a usable SQLite database: check it with shed_file_type; to load a CSV use import_csv",
		TableExists:   "Use if_exists='replace' or if_exists='append'",
		CSVEmpty:      "The CSV has no data rows: check the file with shed_read, or skip_rows/has_header",
		CSVParseError: "Give delimiter=, encoding= or skip_rows= explicitly (guide: shed_help(howto='csv_to_sqlite'))",
		CSVTooWide:    "SQLite tables have at most 2000 columns: cut the CSV's columns with shed_exec (cut -d, -f1-100)",
		SQLForbidden:  "ATTACH, DETACH, load_extension and PRAGMAs that change settings are not allowed: query the tables of this database with shed_sqlite",
	})
}
