-- the access token a code's exchange issued, so a replayed code can revoke it (RFC 6749 §4.1.2)
alter table authorization_codes add column access_token_jti text;
alter table authorization_codes add column access_token_expires_at timestamptz;
