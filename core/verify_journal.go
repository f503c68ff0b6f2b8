package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/store"
)

// maxJournalShown bounds the damaged images AdminVerify lists per user (all are counted).
const maxJournalShown = 20

// verifyJournal checks the before-images user o's journal rows name in its journal area
// (issue 36): every object is there and holds what its name says: the SHA-256 of its
// content in a plain area; in a sealed one, whose names are random, every segment decrypts
// and authenticates. A manifest's objects are checked too, and every row's inline image
// (its bytes in the row: hashed, or decrypted whole). It returns how many images are
// missing or damaged and the first maxJournalShown, each as "<image>: why". Why images at
// all: an undo trusts them to put back what was there, and nothing else reads them until
// then (they are written without fsync).
func (s *Service) verifyJournal(ctx context.Context, o store.Owner) (int, []string, error) {
	images, err := s.db.JournalImages(ctx, o)
	if err != nil || len(images) == 0 || o.Kind != "user" {
		return 0, nil, err
	}
	z, err := s.ResolveZone(ctx, Caller{UserID: o.ID}, "storage", "", false)
	if err != nil {
		return len(images), []string{"the journal area cannot be opened: " + err.Error()}, nil
	}
	defer z.Close()
	a, err := s.openArea(z)
	if err != nil {
		return len(images), []string{"the journal area cannot be opened: " + err.Error()}, nil
	}
	defer a.Close()
	n, shown := 0, []string(nil)
	problem := func(image, why string) {
		if n++; n <= maxJournalShown {
			shown = append(shown, image+": "+why)
		}
	}
	for _, im := range images {
		if err := ctx.Err(); err != nil {
			return n, shown, err
		}
		if strings.HasPrefix(im.Image, imageInline) {
			continue // each row's copy is checked below
		}
		if why := a.checkImage(im.Image); why != "" {
			problem(im.Image, why)
		}
	}
	err = s.db.JournalInlineImages(ctx, o, func(im store.InlineImage) error {
		if why := checkInline(a.fs, im); why != "" {
			problem(fmt.Sprintf("%s (change %d)", im.Image, im.ID), why)
		}
		return ctx.Err()
	})
	return n, shown, err
}

// checkImage checks one image (cas: an object; tree: a manifest and its objects): "" when
// sound, else what is wrong.
func (a *imageArea) checkImage(image string) string {
	name, tree := strings.CutPrefix(image, imageTree)
	name = strings.TrimPrefix(name, imageCAS)
	if why := a.checkObject(name); why != "" || !tree {
		return why
	}
	entries, err := a.manifest(name)
	if err != nil {
		return "its manifest is damaged"
	}
	for _, e := range entries {
		if e.Object == "" {
			continue
		}
		if why := a.checkObject(e.Object); why != "" {
			return fmt.Sprintf("%s (object of %q)", why, e.Path)
		}
	}
	return ""
}

// checkObject reads the object name whole: "" when it is there and holds what its name
// says, "missing" or "damaged" otherwise.
func (a *imageArea) checkObject(name string) string {
	undecryptable := "damaged (it does not decrypt)"
	r, err := a.open(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case errors.Is(err, crypt.ErrAuth) || errors.Is(err, crypt.ErrFormat):
		return undecryptable
	case err != nil:
		return "unreadable: " + err.Error()
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); errors.Is(err, crypt.ErrAuth) || errors.Is(err, crypt.ErrFormat) {
		return undecryptable
	} else if err != nil {
		return "unreadable: " + err.Error()
	}
	if !a.sealed && hex.EncodeToString(h.Sum(nil)) != name {
		return "damaged (its content does not match its hash)"
	}
	return ""
}
