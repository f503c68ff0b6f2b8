package core

import (
	"context"
	"io"
	"strings"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// Reading a before-image back (undo, diffs): from the history of a versioned zone (the
// commit's parent) or from the user's journal area (an object, or a manifest and its
// objects), or from the row itself (an inline image: journal_inline.go), bounded.

// beforeImage is a before-image read back: one file, or the files of a folder.
type beforeImage struct {
	dir   bool
	files []vcs.TreeFile
}

// openImage reads e's before-image, at most limit bytes.
func (s *Service) openImage(ctx context.Context, c Caller, e store.JournalEntry, limit int64) (beforeImage, error) {
	z, err := s.journalZone(ctx, c, e, false)
	if err != nil {
		return beforeImage{}, err
	}
	defer z.Close()
	switch {
	case e.Image == imageGit:
		r, err := s.Repo(z)
		if err != nil {
			return beforeImage{}, err
		}
		defer r.Release()
		files, dir, ok, err := r.Before(e.Commit, e.Path, limit)
		if err != nil {
			return beforeImage{}, errDiffGone("its before-image cannot be read from the history: " + err.Error())
		}
		if !ok {
			return beforeImage{}, errDiffGone("its before-image is not in the history")
		}
		return beforeImage{dir: dir, files: files}, nil
	case strings.HasPrefix(e.Image, imageInline):
		return s.readInline(ctx, z, e, limit)
	case strings.HasPrefix(e.Image, imageCAS), strings.HasPrefix(e.Image, imageTree):
		a, err := s.openArea(z)
		if err != nil {
			return beforeImage{}, err
		}
		defer a.Close()
		return a.read(e.Image, limit)
	}
	return beforeImage{}, errDiffGone(cmpOr(e.NoImage, "no before-image was kept"))
}

// read reads the image named image back.
func (a *imageArea) read(image string, limit int64) (beforeImage, error) {
	object := func(name string) ([]byte, error) {
		r, err := a.open(name)
		if err != nil {
			return nil, errDiffGone("its before-image is gone from the journal area")
		}
		defer r.Close()
		b, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return nil, errDiffGone("its before-image is damaged")
		}
		if int64(len(b)) > limit {
			return nil, errDiffGone("its before-image is larger than allowed")
		}
		return b, nil
	}
	if name, ok := strings.CutPrefix(image, imageCAS); ok {
		b, err := object(name)
		return beforeImage{files: []vcs.TreeFile{{Data: b}}}, err
	}
	entries, err := a.manifest(strings.TrimPrefix(image, imageTree))
	if err != nil {
		return beforeImage{}, errDiffGone("its before-image is gone from the journal area")
	}
	var img beforeImage
	for _, te := range entries {
		switch {
		case te.Path == "" && te.Kind == "d":
			img.dir = true
		case te.Kind == "l":
			img.files = append(img.files, vcs.TreeFile{Path: te.Path, Data: []byte(te.Link), Link: true})
		case te.Kind == "f":
			b, err := object(te.Object)
			if err != nil {
				return img, err
			}
			img.files = append(img.files, vcs.TreeFile{Path: te.Path, Data: b})
		}
	}
	return img, nil
}

// cmpOr is a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
