package core

// Codes of page-by-page reading (shed_read on a PDF, shed_file_type's page count) and of
// result pages (shed_save_page).
const (
	// PdfEncrypted: the PDF needs a password, or forbids copying its text.
	PdfEncrypted Code = "PDF_ENCRYPTED"
	// PdfNoText: the pages asked for have no text layer (scanned images).
	PdfNoText Code = "PDF_NO_TEXT"
	// PdfUnreadable: the PDF engine cannot parse the file (truncated, corrupt).
	PdfUnreadable Code = "PDF_UNREADABLE"
	// PdfTooCostly: the PDF engine reached the command memory or CPU-time limit.
	PdfTooCostly Code = "PDF_TOO_COSTLY"
)

func init() {
	addHints(map[Code]string{
		PdfEncrypted:  "The PDF is password-protected: ask the user for an unprotected copy, then shed_import it",
		PdfNoText:     "The pages are images (a scan): no text to extract; try other pages=, or check page_count with shed_file_type",
		PdfUnreadable: "The file is damaged or not a PDF: shed_file_type and shed_hexdump show what it is",
		PdfTooCostly:  "Read fewer pages at a time (pages=\"1-2\"); a PDF this costly may be built to exhaust the reader",
	})
}
