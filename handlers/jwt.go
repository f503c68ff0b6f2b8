package handlers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"
)

// jwtLeeway is the clock skew tolerated between Open WebUI and fileshed on exp, nbf and iat.
const jwtLeeway = 60 * time.Second

// jwtAuth is mode jwt: the static bearer key plus the X-OpenWebUI-User-Jwt that Open WebUI
// mints when FORWARD_USER_INFO_HEADER_JWT_SECRET is set (backend/open_webui/utils/headers.py:
// HS256; claims sub = user id, email, name, role, iss "open-webui", iat, exp = iat + 300 s).
type jwtAuth struct {
	key    string
	secret []byte
	issuer string // "" accepts any iss
}

type jwtClaims struct {
	Sub   string `json:"sub"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Iss   string `json:"iss"`
	Exp   *int64 `json:"exp"`
	Nbf   *int64 `json:"nbf"`
	Iat   *int64 `json:"iat"`
	// Groups are the caller's group ids where the token carries them (Open WebUI's does
	// not; a proxy minting its own may): signed like the identity, so trusted like it.
	Groups []string `json:"groups"`
}

func (a jwtAuth) Authenticate(r *http.Request) (core.Caller, error) {
	if err := checkKey(r, a.key); err != nil {
		return core.Caller{}, err
	}
	raw := r.Header.Get(headerUserJWT)
	if raw == "" {
		return core.Caller{}, core.Errf(core.AuthRequired, "Missing %s header", headerUserJWT).
			WithHint("Set ENABLE_FORWARD_USER_INFO_HEADERS=true and FORWARD_USER_INFO_HEADER_JWT_SECRET in Open WebUI")
	}
	cl, err := verifyHS256(raw, a.secret, a.issuer, time.Now())
	if err != nil {
		return core.Caller{}, core.Errf(core.AuthInvalid, "Invalid user token: %v", err).
			WithHint("Open WebUI's FORWARD_USER_INFO_HEADER_JWT_SECRET must equal auth.jwt_secret, and both clocks be right")
	}
	// The user id is sub only: Open WebUI puts the user id there, and a second claim
	// would let one token name two users.
	var groups []string // nil: the token says nothing of groups (groups.static answers)
	if cl.Groups != nil {
		groups = []string{}
		for _, g := range cl.Groups {
			if g = strings.TrimSpace(g); g != "" {
				groups = append(groups, g)
			}
		}
	}
	return core.NewCaller(cl.Sub, cl.Name, cl.Email, cl.Role, r.Header.Get(headerChatID), groups, "")
}

type jwtError string

func (e jwtError) Error() string { return string(e) }

// verifyHS256 checks a compact JWS: alg HS256 only (no "none", no key confusion), a valid
// signature compared in constant time, exp required and in the future, nbf and iat not in
// the future (each with jwtLeeway), and iss equal to issuer when issuer is set.
func verifyHS256(token string, secret []byte, issuer string, now time.Time) (jwtClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jwtClaims{}, jwtError("malformed")
	}
	var head struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &head); err != nil || head.Alg != "HS256" {
		return jwtClaims{}, jwtError("unsupported algorithm")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return jwtClaims{}, jwtError("malformed signature")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return jwtClaims{}, jwtError("bad signature")
	}
	var cl jwtClaims
	if err := decodeSegment(parts[1], &cl); err != nil {
		return jwtClaims{}, jwtError("malformed claims")
	}
	leeway := int64(jwtLeeway / time.Second)
	t := now.Unix()
	switch {
	case cl.Exp == nil:
		return jwtClaims{}, jwtError("no exp claim")
	case t >= *cl.Exp+leeway:
		return jwtClaims{}, jwtError("expired")
	case cl.Nbf != nil && t+leeway < *cl.Nbf:
		return jwtClaims{}, jwtError("not valid yet (nbf)")
	case cl.Iat != nil && t+leeway < *cl.Iat:
		return jwtClaims{}, jwtError("issued in the future (iat)")
	case issuer != "" && cl.Iss != issuer:
		return jwtClaims{}, jwtError("issuer is not " + issuer)
	case cl.Sub == "":
		return jwtClaims{}, jwtError("no sub claim")
	}
	return cl, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
