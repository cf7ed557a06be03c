-- RFC 9449 §10: an authorization code bound to the DPoP key named by dpop_jkt (or proven at /par).
alter table authorization_codes add column dpop_jkt text;
