-- The market's external listings and availability fixes. A listing of an external A2A agent keeps
-- where its agent card is fetched (card_url), the SHA-256 of the card as listed (JCS bytes, without
-- `signatures`), the hash seen at the latest fetch and whether it differs (card_changed: flagged,
-- hiring refused until the provider publishes again), the key id of the card's verified JWS
-- signature (null: unsigned), and the RFC 8707 resource the rental's idp tokens are asked for when
-- the card requires the rental's idp (null: the agent takes no token). A built-in agent's listing
-- has all of them null. `unpublished`: the listing is off the market (search, /market, hiring).
alter table rental_listings add column card_url text;
alter table rental_listings add column card_sha256 text;
alter table rental_listings add column card_latest_sha256 text;
alter table rental_listings add column card_changed boolean not null default false;
alter table rental_listings add column card_signature_kid text;
alter table rental_listings add column card_token_resource text;
alter table rental_listings add column card_fetched_at timestamptz;
alter table rental_listings drop constraint rental_listings_availability_check;
alter table rental_listings add constraint rental_listings_availability_check
  check (availability in ('available', 'limited', 'unavailable', 'unpublished'));
alter table rental_listings add constraint rental_listings_card_check
  check ((card_url is null) = (card_sha256 is null));
-- an external agent's token resource is looked up by URL prefix at each dispatch
create index rental_listings_token_resource_idx on rental_listings (card_token_resource)
  where card_token_resource is not null;
