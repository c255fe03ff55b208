/*
 * fencing: the protocol between Redis leases and the PostgreSQL fence, for one resource.
 * README.md says what is modelled, what is abstracted away, and how to run it.
 *
 * Switches (spin -D...):
 *   HOLDERS, ACQS, TXNS, STMTS, FAULTS  bounds (defaults below)
 *   RR            writers run REPEATABLE READ (default READ COMMITTED); registration stays RC
 *   NOFENCE       broken: guarded writes do not check the fence (row guard only)
 *   NOLOCK        broken: the fence is read without FOR SHARE (also what FOR KEY SHARE amounts
 *                 to: registration's non-key UPDATE does not conflict with it)
 *   REG_GE        broken: registration accepts token >= stored instead of >
 *   MARKER_EARLY  broken: the verify statement sets the transaction marker before its row lock
 *                 is granted (set_config in the select list of a SELECT ... FOR SHARE)
 *   BATCH_NOMARK  broken: batch rows inside a transaction write without checking the marker
 *   CLIENT_FLAG   broken: batches run the row guard only once a Java-side flag says the
 *                 transaction was verified; COMMIT sent as SQL text leaves the flag set
 *                 (needs STMTS >= 3)
 *   FAILOVER      PostgreSQL fails over once to an asynchronous standby that missed the last
 *                 registration (the fence goes back to the version before it, the epoch moves
 *                 on); holders re-register a lease the fence lost (FencedLeaseManager's check)
 *   NOEPOCH       broken (with FAILOVER): fence checks ignore the epoch
 *   HANDOFF       a waiter acquires through the WAIT script, the FIFO queue and its grant; release
 *                 and ABANDON hand the lock to the next live waiter with a fresh token; grants can
 *                 be lost, waiters can give up (the direct acquire script stays, for old clients)
 *   HANDOFF_REUSE broken (with HANDOFF): the hand-off grants the lock with the token of the lock
 *                 it deleted (no INCR)
 *   NO_TTL_BOUND  broken (with HANDOFF): a waiter waits only for its grant, it never calls WAIT
 *                 again when min(remaining wait, lock TTL) passes
 */

#ifndef HOLDERS
#define HOLDERS 2
#endif
#ifndef ACQS
#define ACQS 2          /* acquisitions per holder, recoveries included */
#endif
#ifndef TXNS
#define TXNS 1          /* transactions per lease */
#endif
#ifndef STMTS
#define STMTS 2         /* statements per explicit transaction */
#endif
#ifndef FAULTS
#define FAULTS 1        /* Redis counter losses / fail-overs per run */
#endif

#define NONE 0
#define BIT(p) (1 << (p))
#define ALL ((1 << (HOLDERS + 1)) - 2)
#define OTHERS(p) (ALL & ~BIT(p))

/* Redis: the lock key (value = lease id, unique per acquisition) and the token counter */
byte lockOwner;
byte counter;
byte faults;
byte nextLease;

#ifdef HANDOFF
#define LEASES (HOLDERS * ACQS)   /* lease ids 1..LEASES: one per acquisition attempt */
#define LBIT(l) (1 << (l))
/* the token in the lock's value (leaseId:token) */
byte lockTok;
/* the FIFO queue of waiting lease ids (q[0] is the head), and the same set as a bit mask; room
   for every lease id, as after a restart a late WAIT of an abandoned lease can queue it again */
byte q[LEASES];
byte qn;
int inq;
/* the per-lease "abandoned" markers (bit mask) and each lease's grant (the news of a hand-off
   on its way: the releasing manager's direct completion or the pub/sub announcement) */
int abandoned;
byte grantTok[LEASES + 1];
/* ghost: the highest token issued (acquire, WAIT or hand-off) since the last Redis fault */
byte hiIssued;
byte hw;         /* scratch: the queue entry being looked at (0 outside atomic steps) */
byte hi;
#endif

/* PostgreSQL: the fence row, committed version (exists from the start: token 0, no lease) */
byte ftok;
byte flease;
byte xlock;      /* holder whose registration transaction has locked the row for update */
byte shares;     /* holders whose open transaction holds the row FOR SHARE */

/* one fenced data row: its committed fence_token and its row lock */
byte rowtok;
byte rowlock;
#ifdef RR
byte rowChanged; /* holders whose snapshot predates a committed write of the row */
#endif

/* the fence epoch (PostgreSQL timeline): the fence row's, the server's; and the fence version the
   asynchronous standby has (the one before the last registration) */
byte fepoch;
byte sepoch;
byte prevTok;
byte prevLease;
byte prevEpoch;
byte failovers;

#ifdef NOEPOCH
#define EPOCH_OK true
#else
#define EPOCH_OK (fepoch == sepoch)
#endif

/* ghost: the committed registration with the highest token (the first one at that token); after
   a fail-over, of the history the promoted standby has (what it never received is lost) */
byte hiTok;
byte hiLease;

/* the lease time runs out (the holder is paused, its heartbeat late), or Redis loses state */
active proctype Redis() {
end:
  do
  :: atomic { lockOwner != NONE -> printf("redis: lease %d expired\n", lockOwner); lockOwner = NONE
#ifdef HANDOFF
              ; lockTok = 0
#endif
            }
  :: atomic { faults < FAULTS -> faults++; counter = 0; lockOwner = NONE;
#ifdef HANDOFF
              /* every key is gone: queue, grants, markers */
              lockTok = 0; hiIssued = 0; qn = 0; inq = 0; abandoned = 0;
              hi = 0; do :: hi < LEASES -> q[hi] = 0; hi++ :: else -> break od;
              hi = 0; do :: hi <= LEASES -> grantTok[hi] = 0; hi++ :: else -> break od; hi = 0;
#endif
              printf("redis: restart without persistence, counter 0\n") }
  :: atomic { faults < FAULTS && counter > 0 -> faults++; counter--; lockOwner = NONE;
#ifdef HANDOFF
              lockTok = 0; hiIssued = counter;
#endif
              printf("redis: fail-over to a replica that missed the last INCR, counter %d\n", counter) }
  od
}

#ifdef HANDOFF
/* a token leaves Redis (acquire, WAIT or hand-off): the ghost check that tokens strictly increase
   between Redis faults (what the fence relies on to tell a successor from a stale holder) */
inline issued(t) {
  assert(t > hiIssued);
  hiIssued = t
}

/* remove lease l from the queue, keeping the order of the others */
inline qRemove(l) {
  if
  :: (inq & LBIT(l)) != 0 ->
     hi = 0;
     do
     :: hi < qn && q[hi] != l -> hi++
     :: else -> break
     od;
     do
     :: hi + 1 < qn -> q[hi] = q[hi + 1]; hi++
     :: else -> break
     od;
     qn--; q[qn] = 0; inq = inq & ~LBIT(l); hi = 0
  :: else
  fi
}

/* HAND OFF (inside RELEASE and ABANDON, after they deleted the lock whose token was old): pop
   entries until a live, non-abandoned one; INCR, SET the lock to thatLeaseId:token, push the token
   to its grant. An entry whose expiry has passed (its waiter is dead or paused past its wait)
   is skipped: any entry may be. The grant can be lost: the waiter never sees it. */
inline handOff(old) {
  do
  :: qn == 0 -> break
  :: qn > 0 ->
     hw = q[0]; qRemove(hw);
     if
     :: (abandoned & LBIT(hw)) != 0 ->
        printf("redis: hand-off skips abandoned lease %d\n", hw)
     :: else ->
        if
        :: printf("redis: hand-off skips lease %d, its entry expired\n", hw)
        :: lockOwner = hw;
#ifdef HANDOFF_REUSE
           lockTok = old;
#else
           counter++; lockTok = counter;
#endif
           printf("redis: hand-off grants lease %d token %d\n", hw, lockTok);
           issued(lockTok);
           if
           :: grantTok[hw] = lockTok
           :: printf("redis: the grant to lease %d is lost\n", hw)
           fi;
           break
        fi
     fi
  od;
  hw = 0
}
#endif

#ifdef FAILOVER
/* The primary is lost between transactions (in-flight ones die with it): the promoted standby has
   the fence as it was before the last registration, and a new timeline. */
active proctype Failover() {
  atomic { failovers < 1 && xlock == NONE && shares == 0 && rowlock == NONE ->
    failovers++; ftok = prevTok; flease = prevLease; fepoch = prevEpoch; sepoch++;
    hiTok = ftok; hiLease = flease;
    printf("postgres: fail-over to a standby without the last registration: fence %d lease %d epoch %d, server epoch %d\n",
           ftok, flease, fepoch, sepoch) }
}
#endif

/* a registration commits: the fence row moves up, on the server's epoch */
inline registerNow() {
  prevTok = ftok; prevLease = flease; prevEpoch = fepoch;
  ftok = tok; flease = lease; fepoch = sepoch; regEpoch = sepoch;
  printf("holder %d: registered token %d lease %d epoch %d\n", me, tok, lease, sepoch);
  if
  :: tok > hiTok -> hiTok = tok; hiLease = lease
  :: else
  fi
}

/* The statement's snapshot (READ COMMITTED), or the transaction's, taken by its first
   statement (REPEATABLE READ). Only the committed fence and data row are visible. */
inline snapshot() {
#ifdef RR
  if
  :: !snapTaken ->
     snapTaken = true; snapLease = flease; snapRow = rowtok; rowChanged = rowChanged & ~BIT(me)
  :: else
  fi
#else
  snapLease = flease
#endif
}

/* The fence predicate: true only while the committed fence names this registration, taking
   FOR SHARE on the row until the transaction ends. Under READ COMMITTED a row locked by an
   uncommitted registration is waited for, then rechecked in its committed version
   (EvalPlanQual); under REPEATABLE READ an update after the snapshot is a serialization error. */
inline fenceCheck(verifying) {
#if defined(NOFENCE)
  fenceOk = true
#elif defined(NOLOCK)
  fenceOk = (snapLease == lease)
#else
  if
  :: snapLease == lease ->
#ifdef MARKER_EARLY
     if :: verifying -> mGuard = true :: else fi;
#endif
     atomic { xlock == NONE ->
       if
       :: flease == lease && EPOCH_OK -> shares = shares | BIT(me); fenceOk = true
#ifdef RR
       :: else -> aborted = true
#else
       :: else -> fenceOk = false
#endif
       fi }
  :: else -> fenceOk = false
  fi
#endif
}

/* UPDATE of the data row with the row guard fence_token <= t, stamping fence_token = t */
inline rowWrite() {
#ifdef RR
  if
  :: snapRow > tok   /* the snapshot's version fails the row guard: zero rows */
  :: else ->
     atomic { rowlock == NONE || rowlock == me ->
       if
       :: (rowChanged & BIT(me)) != 0 -> aborted = true
       :: else -> rowlock = me; wrote = true
       fi }
  fi
#else
  /* a version that fails the guard is skipped without waiting (stamps only grow); otherwise
     the row lock is waited for and the guard rechecked on the latest committed version */
  if
  :: rowtok > tok
  :: else ->
     atomic { rowlock == NONE || rowlock == me ->
       if
       :: rowtok <= tok -> rowlock = me; wrote = true
       :: else
       fi }
  fi
#endif
}

/* BEFORE ROW trigger enforce_fence(): the target row is locked first; once per transaction
   the trigger reads the fence row FOR SHARE by resource and compares it, then sets its
   transaction-keyed marker; a mismatch or a newer row stamp raises ZF001 (the transaction
   is aborted). */
inline triggerWrite() {
  atomic { rowlock == NONE || rowlock == me ->
#ifdef RR
    if
    :: (rowChanged & BIT(me)) != 0 -> aborted = true
    :: else -> rowlock = me
    fi
#else
    rowlock = me
#endif
  };
  if
  :: !aborted && !mTrig ->
#if defined(NOFENCE)
     mTrig = true
#elif defined(NOLOCK)
     if :: snapLease == lease -> mTrig = true :: else -> aborted = true fi
#else
     atomic { xlock == NONE ->
#ifdef RR
       if
       :: flease != snapLease -> aborted = true
       :: else ->
          if
          :: flease == lease && EPOCH_OK -> shares = shares | BIT(me); mTrig = true
          :: else -> aborted = true
          fi
       fi
#else
       if
       :: flease == lease && EPOCH_OK -> shares = shares | BIT(me); mTrig = true
       :: else -> aborted = true
       fi
#endif
     }
#endif
  :: else
  fi;
  if
  :: !aborted ->
     if
     :: rowtok > tok -> aborted = true
     :: else -> wrote = true
     fi
  :: else
  fi
}

/* what the database forgets at the end of a transaction: locks, marker, snapshot */
inline endDbTransaction() {
  if :: rowlock == me -> rowlock = NONE :: else fi;
  shares = shares & ~BIT(me);
  wrote = false; aborted = false; mGuard = false; mTrig = false;
  snapTaken = false; snapLease = 0; snapRow = 0
}

inline endTransaction() {
  endDbTransaction();
#ifdef CLIENT_FLAG
  jflag = false;
#endif
  st = 0; autocommit = false
}

/* The invariant: a write that commits after a registration (t, L) committed carries a token
   above t, or exactly t and lease L. */
inline commitWrites() {
    if
    :: wrote ->
       printf("holder %d: COMMIT of a write with token %d lease %d (fence: %d lease %d)\n",
              me, tok, lease, ftok, flease);
       assert(tok > hiTok || (tok == hiTok && lease == hiLease));
       /* after a promotion, no write commits under a registration made before it */
       assert(regEpoch == sepoch);
       rowtok = tok;
#ifdef RR
       rowChanged = rowChanged | OTHERS(me);
#endif
    :: else -> printf("holder %d: COMMIT (nothing written)\n", me)
    fi
}

inline commit() {
  atomic { commitWrites(); endTransaction() }
}

inline rollback() {
  atomic { printf("holder %d: ROLLBACK\n", me); endTransaction() }
}

#ifdef HANDOFF
/* WAIT script, one atomic round trip (the caller's lease) */
inline waitScript() {
  atomic {
    if
    :: (abandoned & LBIT(lease)) != 0 ->
       printf("holder %d: late WAIT: lease %d abandoned, nothing\n", me, lease)
    :: else ->
       if
       :: lockOwner == lease ->
          /* granted earlier (its grant not seen): re-arm the TTL, leave the queue */
          tok = lockTok; qRemove(lease); grantTok[lease] = 0;
          printf("holder %d: WAIT finds lease %d granted, token %d\n", me, lease, tok)
       :: lockOwner == NONE ->
          /* the lock is free (say, after an expiry): no queue priority */
          counter++; tok = counter; lockOwner = lease; lockTok = tok; issued(tok); qRemove(lease);
          grantTok[lease] = 0;   /* a grant whose lock expired: never read again */
          printf("holder %d: WAIT acquires token %d lease %d\n", me, tok, lease)
       :: else ->
          if
          :: (inq & LBIT(lease)) == 0 -> q[qn] = lease; qn++; inq = inq | LBIT(lease);
             printf("holder %d: WAIT queues lease %d (%d waiting)\n", me, lease, qn)
          :: else   /* keeps its place */
          fi
       fi
    fi
  }
}
#endif

proctype Holder(byte me) {
  byte tok, lease, cur, acq, txn, st, snapLease, snapRow, regEpoch;
  bool autocommit, wrote, aborted, mGuard, mTrig, fenceOk, snapTaken;
#ifdef HANDOFF
  bool patient;    /* this wait has no deadline (acquire() rather than tryAcquire) */
#endif
#ifdef CLIENT_FLAG
  bool jflag;      /* the connection's Java-side "verified in this transaction" flag */
#endif

acquire:
  /* acquire script: EXISTS, INCR, SET PX (one atomic round trip); or give up waiting */
  if
  :: atomic { acq < ACQS && lockOwner == NONE ->
       acq++; counter++; tok = counter; nextLease++; lease = nextLease; lockOwner = lease;
#ifdef HANDOFF
       lockTok = tok; issued(tok);
#endif
       printf("holder %d: acquired token %d lease %d\n", me, tok, lease) }
#ifdef HANDOFF
  :: /* queued acquisition under a new lease id. Holder 1 waits without a deadline (acquire()),
        the others with one (tryAcquire): they may give up at any moment. (A holder that may give
        up can also choose not to, so this loses no safety case, and keeps the state space small.) */
     atomic { acq < ACQS -> acq++; nextLease++; lease = nextLease;
       patient = (me == 1);
       if
       :: patient -> printf("holder %d: waits as lease %d, without a deadline\n", me, lease)
       :: else -> printf("holder %d: waits as lease %d, with a deadline\n", me, lease)
       fi };
wait:
     waitScript();
     if
     :: tok != 0 -> goto register
     :: else
     fi;
     /* block on the grant (the direct completion or the announcement) for min(remaining wait, lock TTL) */
     do
     :: atomic { grantTok[lease] != 0 -> tok = grantTok[lease]; grantTok[lease] = 0;
          printf("holder %d: sees its grant, token %d lease %d\n", me, tok, lease) };
        goto register
#ifndef NO_TTL_BOUND
     :: /* the TTL bound passes: WAIT again. (Only when WAIT would change something: a WAIT that
           finds the lock held by another and this lease queued just refreshes the entry's expiry,
           which the model leaves nondeterministic anyway.) */
        lockOwner == NONE || lockOwner == lease || (inq & LBIT(lease)) == 0 ->
        printf("holder %d: the TTL bound passed, WAIT again\n", me);
        goto wait
#endif
     :: /* the deadline passes: ABANDON, one atomic round trip */
        !patient ->
        atomic {
          printf("holder %d: gives up, ABANDON lease %d\n", me, lease);
          abandoned = abandoned | LBIT(lease); qRemove(lease);
          if
          :: lockOwner == lease -> /* granted, not yet consumed */
             cur = lockTok; lockOwner = NONE; lockTok = 0; handOff(cur); cur = 0
          :: else
          fi;
          grantTok[lease] = 0
        };
        /* a WAIT of this lease still in flight may arrive after the ABANDON */
        if
        :: waitScript()
        :: skip
        fi;
        atomic { lease = 0; tok = 0; patient = false };
        goto acquire
     od
#endif
  :: goto done
  fi;

register:

  /* registration: upsert ... DO UPDATE ... WHERE f.token < EXCLUDED.token, READ COMMITTED.
     ON CONFLICT locks the row (waits for share holders and for another registration), then
     evaluates the WHERE on the latest committed version. */
  atomic { xlock == NONE && shares == 0 -> xlock = me;
#ifdef REG_GE
    cur = (ftok <= tok)
#else
    cur = (ftok < tok)
#endif
  };
  if
  :: cur ->
     if
     :: atomic { registerNow(); xlock = NONE };
        goto work
     :: atomic { xlock = NONE; printf("holder %d: registration rolled back\n", me) };  /* connection lost before commit: rolled back, lease released */
        goto release
     fi
  :: else ->
     /* nothing updated: read the row back under the same lock */
     atomic { cur = ftok; xlock = NONE;
              printf("holder %d: token %d not above the fence (%d): stale\n", me, tok, cur) };
     /* stale (Redis lost or duplicated the counter): if still held, advance the counter past
        the fence (advanceTokenFloor, its own round trip), release, acquire again */
     if
     :: atomic { if :: counter < cur -> counter = cur :: else fi;
                 printf("holder %d: advanced the counter to %d\n", me, counter) }
     :: skip
     fi;
     goto release
  fi;

work:
  txn = 0;
  do
#ifdef FAILOVER
  :: /* FencedLeaseManager's fence check: the fence no longer knows this lease (whatever the
        holder's own view of its lease: a paused holder may do this late) */
     atomic { xlock == NONE && shares == 0 && ftok < tok -> printf("holder %d: the fence lost lease %d: registering again\n", me, lease);
              registerNow() }
#endif
  :: txn < TXNS ->
     txn++;
     if
     :: autocommit = true; printf("holder %d: auto-commit statement\n", me)
     :: autocommit = false; printf("holder %d: BEGIN\n", me)
     fi;
     do
     :: !aborted && st < (autocommit -> 1 : STMTS) ->
        st++;
        if
        :: /* fused guarded write: row guard AND EXISTS(fence ... FOR SHARE) */
           atomic {
             printf("holder %d: guarded write, token %d lease %d\n", me, tok, lease);
             snapshot()
           };
           fenceCheck(false);
           if
           :: fenceOk && !aborted -> rowWrite()
           :: else   /* zero rows: StaleTokenException, the transaction goes on */
           fi
        :: /* batch row: row guard AND the marker, set by a verify in this transaction */
#ifdef BATCH_NOMARK
           !autocommit ->
#else
           mGuard ->
#endif
           atomic { printf("holder %d: batch row, token %d lease %d\n", me, tok, lease); snapshot() };
           fenceOk = true;
           if
           :: !aborted -> rowWrite()
           :: else
           fi
        :: /* verify (batch prelude): lock the fence row, then set the marker */
#ifdef CLIENT_FLAG
           !autocommit && !jflag ->
#else
           !autocommit && !mGuard ->
#endif
           atomic { printf("holder %d: verify, token %d lease %d\n", me, tok, lease); snapshot() };
           fenceCheck(true);
           if
           :: fenceOk -> mGuard = true
#ifdef CLIENT_FLAG
              ; jflag = true
#endif
           :: else    /* no row: StaleTokenException, the transaction goes on */
           fi
#ifdef CLIENT_FLAG
        :: /* main at 5a0ee13: once the flag is set, a batch runs its row-guarded form only */
           !autocommit && jflag ->
           atomic { printf("holder %d: batch (row guard only), token %d\n", me, tok); snapshot() };
           rowWrite()
        :: /* COMMIT sent as SQL text: the transaction ends, the connection's flag stays set */
           !autocommit && !aborted ->
           atomic { printf("holder %d: COMMIT as SQL text\n", me); commitWrites(); endDbTransaction() }
#endif
        :: /* plain DML through the enforcement trigger */
           atomic {
             printf("holder %d: trigger-mode write, token %d lease %d, marker %d\n", me, tok, lease, mTrig);
             snapshot()
           };
           triggerWrite()
        fi;
        atomic {
          printf("holder %d:   -> fence check %d, row written %d, error %d, marker %d\n",
                 me, fenceOk || mTrig, rowlock == me, aborted, mGuard);
          fenceOk = false;
          snapLease = 0
        }
     :: st > 0 -> break
     od;
     if
     :: !aborted -> commit()
     :: !autocommit || aborted -> rollback()
     fi
  :: break
  od;

release:
  /* compare-and-delete */
  atomic {
    if
    :: lockOwner == lease && lease != NONE -> lockOwner = NONE
#ifdef HANDOFF
       ; cur = lockTok; lockTok = 0; handOff(cur)
#endif
    :: else
    fi;
    tok = 0; lease = 0; cur = 0; txn = 0
#ifdef HANDOFF
    ; patient = false
#endif
  }
  goto acquire;
done:
  skip
}


init {
  byte i = 1;
  atomic {
    do
    :: i <= HOLDERS -> run Holder(i); i++
    :: else -> break
    od
  }
}
