-- Runs in the transaction of each fencing migration, before it: the migrations are written for
-- standard_conforming_strings = on (a backslash is an ordinary character in '...'), whatever the
-- server or the connection sets. Transaction-local: the connection is left as it was.
SET LOCAL standard_conforming_strings = on;
