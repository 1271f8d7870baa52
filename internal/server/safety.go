package server

import (
	"crypto/subtle"
	"net"
	"net/http"
	"slices"
	"strings"
)

// isLoopbackName is true for localhost names and loopback addresses.
func isLoopbackName(host string) bool {
	h := strings.ToLower(strings.Trim(host, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed guards against DNS rebinding: a web page on an attacker's
// name that resolves to 127.0.0.1 sends its own name as Host. Loopback
// names, IP literals (rebinding needs a name) and configured names pass.
func (s *Server) hostAllowed(hostHeader string) bool {
	h := hostHeader
	if hh, _, err := net.SplitHostPort(hostHeader); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "" {
		return false
	}
	if isLoopbackName(h) || net.ParseIP(h) != nil {
		return true
	}
	for _, a := range s.cfg.AllowedHosts {
		if strings.EqualFold(a, h) {
			return true
		}
	}
	return false
}

func (s *Server) originAllowed(origin string) bool {
	return origin != "" && (slices.Contains(s.cfg.CORSOrigins, "*") || slices.Contains(s.cfg.CORSOrigins, origin))
}

// guard applies, in order: the Host check, CORS (only when configured),
// the API key and the body limit.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			s.fail(w, r, http.StatusForbidden, "invalid_request_error", "host_not_allowed",
				"Host "+quote(r.Host)+" is not allowed: only loopback names and IP addresses are, unless the server is started with --allow-host NAME")
			return
		}
		if origin := r.Header.Get("Origin"); s.originAllowed(origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Add("Vary", "Origin")
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
				w.Header().Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if s.cfg.APIKey != "" && r.URL.Path != "/health" && !s.keyOK(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="minfer"`)
			s.fail(w, r, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
				"missing or wrong API key: send \"Authorization: Bearer KEY\" with the key the server was started with")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) keyOK(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.APIKey)) == 1
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + s + `"`
}
