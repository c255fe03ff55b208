CREATE TABLE customers (id bigint PRIMARY KEY);
CREATE TABLE charges (
  id bigserial PRIMARY KEY,
  customer_id bigint NOT NULL REFERENCES customers (id),
  amount_cents int NOT NULL
);
