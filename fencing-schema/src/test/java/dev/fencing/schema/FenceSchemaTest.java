package dev.fencing.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class FenceSchemaTest {

  @Test
  void acceptsPlainIdentifiersUpToSixtyThreeCharacters() {
    String longest = "a".repeat(63);
    assertThat(FenceSchema.requireIdentifier("schema", longest)).isEqualTo(longest);
    assertThat(FenceSchema.requireIdentifier("schema", "_billing2")).isEqualTo("_billing2");
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(strings = {"", " ", "1abc", "a-b", "a b", "a\"b", "a;b", "fencing.x"})
  void refusesAnythingElseNamingTheValue(String value) {
    assertThatThrownBy(() -> FenceSchema.requireIdentifier("fence schema", value))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("fence schema must be a plain identifier");
  }

  @Test
  void refusesSixtyFourCharacters() {
    assertThatThrownBy(() -> FenceSchema.requireIdentifier("schema", "a".repeat(64)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 63 characters");
  }

  @Test
  void tableNamesMayCarryOneSchema() {
    assertThat(FenceSchema.requireTableName("billing.invoices")).isEqualTo("billing.invoices");
    assertThatThrownBy(() -> FenceSchema.requireTableName("a.b.c"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a.b.c'");
    assertThatThrownBy(() -> FenceSchema.requireTableName(null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void quotesEachPart() {
    assertThat(FenceSchema.quote("billing.invoices")).isEqualTo("\"billing\".\"invoices\"");
    assertThat(FenceSchema.fenceTable("fencing")).isEqualTo("\"fencing\".fence");
  }

  @Test
  void contractQueryCallsTheContractFunctionOfTheQuotedSchema() {
    assertThat(FenceSchema.contractQuery("billing_fence"))
        .isEqualTo("SELECT \"billing_fence\".fence_contract()");
    assertThatThrownBy(() -> FenceSchema.contractQuery("a;b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("fence schema must be a plain identifier");
  }
}
