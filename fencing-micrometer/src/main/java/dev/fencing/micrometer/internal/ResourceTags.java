package dev.fencing.micrometer.internal;

import io.micrometer.core.instrument.Tags;

/** The {@code resource} tag, present only when enabled. */
final class ResourceTags {
  private ResourceTags() {}

  static Tags of(boolean tagResource, String resource) {
    return tagResource
        ? Tags.of("resource", resource == null ? "unknown" : resource)
        : Tags.empty();
  }
}
