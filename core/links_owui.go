package core

import (
	"context"
	"os"

	"github.com/fileshed/fileshed/core/store"
)

// owuiLinkPrefix marks the ids of links made in links.mode openwebui (Open WebUI file ids).
const owuiLinkPrefix = "owui:"

// linkUpload is shed_link_create in links.mode openwebui (not yet wired).
func (s *Service) linkUpload(_ context.Context, _ Caller, z *Zone, rel, _ string, _ os.FileInfo) (Result, error) {
	return Result{}, Errf(InternalError, "links.mode openwebui is not available").With("zone", z.Label).With("path", rel)
}

// linkUnupload removes the Open WebUI copy of a links.mode openwebui link.
func (s *Service) linkUnupload(_ context.Context, _ Caller, _ store.Link) error { return nil }
