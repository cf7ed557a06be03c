-- DPoP (RFC 9449): a refresh family issued with a proof is bound to that key's thumbprint.
alter table refresh_tokens add column dpop_jkt text;
