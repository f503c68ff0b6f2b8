package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// registerEncryption registers the four encryption tools of the original (reference
// §5.36-§5.39); the model sees them as shed_encryption(action).
func registerEncryption(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_encryption_setup", hints: additive, summary: "Encrypt new files at rest",
		description: "Encrypt every new file of storage and uploads at rest."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Encryption.EncryptionSetup(ctx, c)
		})
	tool(api, d, toolSpec{name: "shed_encryption_status", hints: readOnly, summary: "Encryption state and file counts",
		description: "Whether encryption is on, and how many files are encrypted."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Encryption.EncryptionStatus(ctx, c)
		})
	tool(api, d, toolSpec{name: "shed_encryption_migrate", hints: additive | idempotent, summary: "Encrypt existing files",
		description: "Encrypt the files written before setup (resumable)."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Encryption.EncryptionMigrate(ctx, c)
		})
	tool(api, d, toolSpec{name: "shed_encryption_disable", hints: destructive | idempotent, summary: "Decrypt everything",
		description: "Decrypt every file and stop encrypting (confirm=true)."}, s.Encryption.EncryptionDisable)
}
