package dev.fencing.examples;

/** An active customer as the billing job loads it. */
public record Customer(long id, String name, String plan, long amountCents) {}
