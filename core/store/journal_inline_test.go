package store

import (
	"bytes"
	"context"
	"testing"
)

// Inline images on both drivers (migration 12): written by the row's INSERT (one row, or
// several in one statement) and read back by id, never by a listing; an empty image is an
// empty blob, not none; the images of an owner count each row's copy (an object counts
// once); dropping an image clears the bytes of every row that held it; settling a row
// keeps its bytes; a row that is not inline has none.
func TestJournalInlineRows(t *testing.T) {
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		ann := Owner{"user", "ann"}
		bin := []byte("old\x00bytes\xff")
		row := func(batch string, n int, image string, data []byte) JournalEntry {
			return JournalEntry{Batch: batch, N: n, Pending: true, Replica: "R1", UserID: "ann", ConvID: "c", Tool: "t",
				Owner: ann, Zone: "storage", Path: "p", Op: "write", BytesBefore: 1, BytesAfter: -1, LinesAdded: -1,
				LinesRemoved: -1, Image: image, ImageBytes: int64(len(data)), ImageData: data}
		}
		must(t, d.JournalBegin(ctx, []JournalEntry{row("one", 0, "inline:aa", bin)}))
		must(t, d.JournalBegin(ctx, []JournalEntry{row("two", 0, "inline:aa", bin), row("two", 1, "inline:empty", []byte{}),
			row("two", 2, "cas:00", nil)}))
		pending, err := d.JournalPending(ctx, "")
		must(t, err)
		if len(pending) != 4 || pending[0].ImageData != nil {
			t.Fatalf("pending rows: %d, the bytes listed: %q", len(pending), pending[0].ImageData)
		}
		first := pending[0]
		first.Pending, first.AfterIdent = false, "f:1"
		must(t, d.JournalSettle(ctx, "one", []JournalEntry{first}, nil, nil))
		for i, want := range [][]byte{bin, bin, {}, nil} {
			got, ok, err := d.JournalImageData(ctx, pending[i].ID)
			if err != nil || ok != (want != nil) || !bytes.Equal(got, want) {
				t.Fatalf("row %d's image: %q %v %v, want %q", i, got, ok, err, want)
			}
		}
		ims, err := d.JournalImages(ctx, ann)
		must(t, err)
		bytesOf := map[string]int64{}
		for _, im := range ims {
			bytesOf[im.Image] = im.Bytes
		}
		if len(ims) != 3 || bytesOf["inline:aa"] != 2*int64(len(bin)) || bytesOf["inline:empty"] != 0 {
			t.Fatalf("images: %+v", ims)
		}
		var seen []InlineImage
		must(t, d.JournalInlineImages(ctx, ann, func(im InlineImage) error { seen = append(seen, im); return nil }))
		if len(seen) != 3 || !bytes.Equal(seen[1].Data, bin) || seen[2].Data == nil || len(seen[2].Data) != 0 {
			t.Fatalf("inline images: %+v", seen)
		}
		must(t, d.JournalDropImage(ctx, ann, "inline:aa", "evicted"))
		for _, id := range []int64{pending[0].ID, pending[1].ID} {
			if got, ok, err := d.JournalImageData(ctx, id); err != nil || ok || got != nil {
				t.Fatalf("an evicted image read back: %q %v %v", got, ok, err)
			}
		}
		var held int
		must(t, d.queryRow(ctx, `SELECT count(image_data) FROM journal`).Scan(&held))
		if held != 1 {
			t.Fatalf("%d rows hold bytes after the eviction, want the empty image's alone", held)
		}
	})
}
