package dev.fencing.jdbc.internal;

/** What the wrapper must do around each execution of a statement, besides the scope's checks. */
enum Routing {
  /** Nothing more. */
  PLAIN,
  /** The statement may end or rewind the transaction behind the wrapper's back. */
  MAY_CONTROL_TRANSACTION,
  /** Guarded SQL: an execution that affects no row is classified with one read of the fence. */
  GUARDED;

  static Routing of(boolean mayControlTransaction) {
    return mayControlTransaction ? MAY_CONTROL_TRANSACTION : PLAIN;
  }
}
