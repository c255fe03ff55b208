-- Scratch databases of MariaDbBatch.java: table mdbp.a (10,000 rows), fence mdbpf.fence with the
-- row resource 'job', token 7, lease 'L7'. Run: mysql -h 127.0.0.1 -u root test < mariadb-setup.sql
-- Drop when done: DROP DATABASE mdbp; DROP DATABASE mdbpf;
DROP DATABASE IF EXISTS mdbp;
DROP DATABASE IF EXISTS mdbpf;
CREATE DATABASE mdbp;
CREATE DATABASE mdbpf;
CREATE TABLE mdbpf.fence (
    resource      VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    token         BIGINT       NOT NULL,
    lease_id      VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    registered_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB;
INSERT INTO mdbpf.fence (resource, token, lease_id) VALUES ('job', 7, 'L7');
CREATE TABLE mdbp.a (
    id             BIGINT PRIMARY KEY,
    owner          VARCHAR(64) NOT NULL,
    balance        BIGINT NOT NULL,
    fence_token    BIGINT NOT NULL DEFAULT 0,
    fence_resource VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin
) ENGINE = InnoDB;
INSERT INTO mdbp.a (id, owner, balance) SELECT seq, CONCAT('owner-', seq), 0 FROM seq_1_to_10000;
