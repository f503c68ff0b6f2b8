package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Inline before-images (migration 12): a small file's image is held by its row
// (image_data), written by the same INSERT as the row. Listings never read it; these do.

// JournalImageData is the inline image of row id (ok false when the row holds none: not
// inline, dropped, or no such row). The queued settlements are written first.
func (d *DB) JournalImageData(ctx context.Context, id int64) (data []byte, ok bool, err error) {
	d.flushJournal()
	err = d.queryRow(ctx, `SELECT image_data FROM journal WHERE id = $1 AND substr(image, 1, 7) = 'inline:'`, id).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("store: read journal image: %w", err)
	}
	if data == nil {
		data = []byte{} // an empty file's image (a driver may read an empty blob as NULL)
	}
	return data, true, nil
}

// InlineImage is one row's inline image, for JournalInlineImages.
type InlineImage struct {
	ID    int64
	Image string
	Data  []byte
}

// JournalInlineImages calls fn with each inline image of o's rows, in id order, one row
// read at a time (admin verify); an error of fn stops it and is returned.
func (d *DB) JournalInlineImages(ctx context.Context, o Owner, fn func(InlineImage) error) error {
	d.flushJournal()
	rs, err := d.unbounded().query(ctx, `SELECT id, image, image_data FROM journal WHERE owner_kind = $1 AND owner_id = $2
		AND substr(image, 1, 7) = 'inline:' ORDER BY id`, o.Kind, o.ID)
	if err != nil {
		return fmt.Errorf("store: journal inline images: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var im InlineImage
		if err := rs.Scan(&im.ID, &im.Image, &im.Data); err != nil {
			return fmt.Errorf("store: journal inline images: %w", err)
		}
		if im.Data == nil {
			im.Data = []byte{}
		}
		if err := fn(im); err != nil {
			return err
		}
	}
	return rs.Err()
}
