package core

// Codes of the archive tools (shed_zip, shed_unzip, shed_zipinfo). INVALID_FORMAT, shared
// with the file tools, is in codes_files.go.
const (
	ZipBomb Code = "ZIP_BOMB"
)

func init() {
	addHints(map[Code]string{
		ZipBomb: "The archive is over the archive limits (see shed_info(action='parameters')): check it with shed_archive(action='info'), or ask an administrator to raise the archive valves",
	})
}
