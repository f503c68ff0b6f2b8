package owui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"time"
)

// Upload stores a file in the token user's Open WebUI files with POST
// {base}/api/v1/files/?process=false (multipart field "file"; no RAG
// processing) and returns its record. name is sent as the file name; content
// is streamed, never held in memory. The client timeout bounds the answer
// once the content is sent; ctx bounds the whole upload.
func (c *Client) Upload(ctx context.Context, token, name string, content io.Reader) (FileInfo, error) {
	const path = "/api/v1/files/"
	if err := checkToken(token); err != nil {
		return FileInfo{}, err
	}
	// Why the timeout starts once the body is sent: a large file may take longer than
	// timeout to upload; what timeout bounds is Open WebUI's answer after it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", name)
		if err == nil {
			_, err = io.Copy(part, content)
		}
		if err == nil {
			err = mw.Close()
		}
		if err == nil {
			time.AfterFunc(c.timeout, cancel)
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path+"?process=false", pr)
	if err != nil {
		pr.CloseWithError(err)
		return FileInfo{}, fmt.Errorf("%w: POST %s: invalid Open WebUI URL", ErrUnavailable, path)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var f fileRecord
	if err := c.send(req, token, path, &f, false); err != nil {
		pr.CloseWithError(err)
		return FileInfo{}, err
	}
	if f.ID == "" || checkID(f.ID) != nil {
		return FileInfo{}, fmt.Errorf("%w: POST %s: answer without a usable file id", ErrRefused, path)
	}
	return f.info(), nil
}

// DeleteFile removes one of the token user's files with DELETE
// {base}/api/v1/files/{id}. A file that is missing or someone else's is ErrNotFound.
func (c *Client) DeleteFile(ctx context.Context, token, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := checkToken(token); err != nil {
		return err
	}
	path := "/api/v1/files/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.base+path, nil)
	if err != nil {
		return fmt.Errorf("%w: DELETE %s: invalid Open WebUI URL", ErrUnavailable, path)
	}
	return c.send(req, token, path, nil, true)
}

// send runs a request with the token, bounded by the client timeout when bounded, and
// decodes a 200 answer's JSON into out (when not nil).
func (c *Client) send(req *http.Request, token, path string, out any, bounded bool) error {
	if bounded {
		ctx, cancel := context.WithTimeout(req.Context(), c.timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	resp, err := c.do(req, token, path, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBigJSON)).Decode(out); err != nil {
		return fmt.Errorf("%w: %s %s: bad JSON", ErrUnavailable, req.Method, path)
	}
	return nil
}
