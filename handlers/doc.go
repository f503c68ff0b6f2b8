// Package handlers is fileshed's HTTP edge: one huma operation per tool (POST /shed_<name>,
// operationId = tool name), the identity middleware that builds core.Caller, the envelope,
// the guard against other web pages (CORS, cross-site requests, DNS rebinding: crossorigin.go),
// health routes, and the download-link route GET|HEAD /dl/{token} (files, folder
// pages, zip streams; HTML and text answers, never the envelope). It holds no business
// logic: every tool calls one core.Service method.
//
// Dependency direction: main -> handlers -> core; handlers may import openapi.
package handlers
