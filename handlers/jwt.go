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

// jwtAuth is mode jwt: the static bearer key plus Open WebUI's HS256-signed
// X-OpenWebUI-User-Jwt (claims sub or id, email, name, role, exp).
type jwtAuth struct {
	key    string
	secret []byte
}

type jwtClaims struct {
	Sub   string `json:"sub"`
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Exp   int64  `json:"exp"`
}

func (a jwtAuth) Authenticate(r *http.Request) (core.Caller, error) {
	if err := checkKey(r, a.key); err != nil {
		return core.Caller{}, err
	}
	raw := r.Header.Get(headerUserJWT)
	if raw == "" {
		return core.Caller{}, core.Errf(core.AuthRequired, "Missing %s header", headerUserJWT)
	}
	cl, err := verifyHS256(raw, a.secret, time.Now())
	if err != nil {
		return core.Caller{}, core.Errf(core.AuthInvalid, "Invalid user token: %v", err)
	}
	id := cl.Sub
	if id == "" {
		id = cl.ID
	}
	return core.NewCaller(id, cl.Name, cl.Email, cl.Role, r.Header.Get(headerChatID), nil, "")
}

type jwtError string

func (e jwtError) Error() string { return string(e) }

// verifyHS256 checks a compact JWS: alg HS256 only (no "none", no key confusion), a valid
// signature compared in constant time, and exp in the future when present.
func verifyHS256(token string, secret []byte, now time.Time) (jwtClaims, error) {
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
	if cl.Exp != 0 && now.Unix() >= cl.Exp {
		return jwtClaims{}, jwtError("expired")
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
