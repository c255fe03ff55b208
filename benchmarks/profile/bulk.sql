\timing on
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo none
UPDATE pf.a SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo V3
UPDATE pf.t SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo minimal
UPDATE pf.t2 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo stamp+guard definer
UPDATE pf.t3 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo stamp + stmt check
UPDATE pf.t4 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo V3
UPDATE pf.t SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo minimal
UPDATE pf.t2 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo stamp+guard definer
UPDATE pf.t3 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo stamp + stmt check
UPDATE pf.t4 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo none
UPDATE pf.a SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo minimal
UPDATE pf.t2 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo stamp+guard definer
UPDATE pf.t3 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo stamp + stmt check
UPDATE pf.t4 SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo none
UPDATE pf.a SET balance = balance + 1;
ROLLBACK;
BEGIN;
SELECT set_config('fencing.resource','job',true), set_config('fencing.token','7',true), set_config('fencing.lease_id','L7',true) \gset
\echo V3
UPDATE pf.t SET balance = balance + 1;
ROLLBACK;
