// Package browsertest drives a real headless Chromium (Debian package chromium) from Go
// tests through the DevTools protocol (chromedp): load a page, read its DOM, follow links,
// take screenshots at given window sizes. Tests that use it skip, naming the package to
// install, when no Chromium is found; CI installs it and fails on skips.
//
// It is test support only: no production package may import it.
package browsertest
