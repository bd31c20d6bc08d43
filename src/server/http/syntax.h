// The pieces of HTTP's grammar (RFC 9110, RFC 9112, RFC 3986) that the request parser checks
// bytes against: tokens, field values, Host, chunk extensions.
#pragma once

#include <string_view>

namespace sinter::server::http {

// token = 1*tchar (RFC 9110 §5.6.2): methods, header names, chunk-extension names.
bool is_token(std::string_view text);

// A field value after its leading and trailing whitespace went (RFC 9110 §5.5): visible
// characters, obs-text (0x80-0xFF), SP and HTAB; no other control character (NUL, a bare CR, ESC,
// DEL...).
bool is_field_value(std::string_view value);

// A request-target's bytes (RFC 9112 §3.2, RFC 3986 §2): not empty, no space and no control
// character; bytes from 0x80 up are let through, as Go's net/http, nginx and Beast do.
bool is_target_text(std::string_view target);

// Host = uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2): a reg-name or IPv4 address, or
// an IP-literal in brackets, then an optional port of digits. Empty is valid (an origin without
// authority).
bool is_valid_host(std::string_view host);

// chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ) (RFC 9112 §7.1.1),
// names tokens, values tokens or quoted-strings (RFC 9110 §5.6.4); empty is valid.
bool is_chunk_extension(std::string_view extension);

std::string_view trim_whitespace(std::string_view text);  // SP and HTAB at both ends

int hex_value(char c);  // 0..15, or -1 for a character that is not a hex digit

}  // namespace sinter::server::http
