package core

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// Inline before-images (issue 36 §5): the before-image of a Storage file of at most
// journal.inline_kb is kept inside its journal row (store: image_data), written by the
// change's pending INSERT, so an overwrite of a small file creates no file in the journal
// area. The row names it "inline:<name>": the SHA-256 of the content, or, in an encrypted
// zone, a random name (as objects are named) with the bytes sealed with the zone's key in
// the format of a sealed file, so the state database never holds a plaintext of the zone.
// Inline images are accounted, evicted (the blob cleared) and expired with their rows like
// objects; each row holds its own copy (an object is shared).

// imageInline is the prefix of an inline image.
const imageInline = "inline:"

// inlineImage is the inline image of an entry of z when it qualifies: a regular file, not a
// link to one (link: the image of a link is a manifest), of at most journal.inline_kb whose
// whole content was read already (content, whose size fi says, as the zone shows it). It
// returns the row's image, its bytes as stored (sealed like z) and whether it qualified; an
// error to seal is logged by the caller.
func (s *Service) inlineImage(z *Zone, link bool, fi fs.FileInfo, content []byte) (string, []byte, bool, error) {
	limit := int64(s.cfg.Journal.InlineKB) << 10
	if link || content == nil || int64(len(content)) > limit || !fi.Mode().IsRegular() || fi.Size() != int64(len(content)) {
		return "", nil, false, nil
	}
	data, err := z.fs.SealBytes(content)
	if err != nil {
		return "", nil, true, err
	}
	var name string
	if z.fs.Sealed() {
		var r [32]byte
		_, _ = rand.Read(r[:]) // never fails (crypt/rand)
		name = hex.EncodeToString(r[:])
	} else {
		sum := sha256.Sum256(content)
		name = hex.EncodeToString(sum[:])
	}
	if data == nil {
		data = []byte{} // an empty file: an empty image, not none
	}
	return imageInline + name, data, true, nil
}

// readInline reads the inline image of row e back (plaintext), at most limit bytes.
func (s *Service) readInline(ctx context.Context, z *Zone, e store.JournalEntry, limit int64) (beforeImage, error) {
	data, ok, err := s.db.JournalImageData(ctx, e.ID)
	switch {
	case err != nil:
		return beforeImage{}, err
	case !ok:
		return beforeImage{}, errDiffGone("its before-image is gone from the journal")
	}
	b, err := z.fs.OpenBytes(data)
	if err != nil {
		return beforeImage{}, errDiffGone("its before-image is damaged")
	}
	if int64(len(b)) > limit {
		return beforeImage{}, errDiffGone("its before-image is larger than allowed")
	}
	return beforeImage{files: []vcs.TreeFile{{Data: b}}}, nil
}

// checkInline checks one inline image (admin verify): "" when sound, else what is wrong.
// Sealed bytes must decrypt and authenticate whole; plain ones must hash to their name.
func checkInline(fsys *confine.Fs, im store.InlineImage) string {
	b, err := fsys.OpenBytes(im.Data)
	switch {
	case errors.Is(err, crypt.ErrAuth) || errors.Is(err, crypt.ErrFormat):
		return "damaged (it does not decrypt)"
	case err != nil:
		return "unreadable: " + err.Error()
	case crypt.IsSealed(im.Data):
		return ""
	}
	sum := sha256.Sum256(b)
	if imageInline+hex.EncodeToString(sum[:]) != im.Image {
		return "damaged (its content does not match its hash)"
	}
	return ""
}
