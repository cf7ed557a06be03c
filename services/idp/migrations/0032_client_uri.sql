-- RFC 7591 §2 client_uri: the client's home page, where the hosted pages send a person back to it
alter table clients add column client_uri text;
