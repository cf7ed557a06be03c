-- private_key_jwt (RFC 7523 §2.2): a client registers its public keys and holds no secret.
alter table clients drop constraint clients_token_endpoint_auth_method_check;
alter table clients add constraint clients_token_endpoint_auth_method_check
  check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'));
alter table clients add column jwks jsonb;
alter table clients add constraint clients_jwks_for_private_key_jwt
  check ((token_endpoint_auth_method = 'private_key_jwt') = (jwks is not null));
-- a secret exactly for the clients that authenticate with one
alter table clients drop constraint clients_check;
alter table clients add constraint clients_secret_for_secret_methods
  check ((token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post')) = (client_secret_hash is not null));
