package dev.fencing.core.internal;

import java.nio.charset.StandardCharsets;

/** Redis Cluster hash slots: CRC16 (XMODEM) of the hash tag, modulo 16384. */
final class Slots {

  private static final int[] TABLE = new int[256];

  static {
    for (int i = 0; i < 256; i++) {
      int crc = i << 8;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
      }
      TABLE[i] = crc & 0xFFFF;
    }
  }

  private Slots() {}

  /** Returns the slot of the keys of {@code resource}, whose hash tag is the resource itself. */
  static int of(String resource) {
    int crc = 0;
    for (byte b : resource.getBytes(StandardCharsets.UTF_8)) {
      crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ b) & 0xFF]) & 0xFFFF;
    }
    return crc & 16383;
  }
}
