package io.jakri.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class CommonPoolTest {

  @Test
  void setsTheParallelismAtWhichCompletableFutureUsesThePool() {
    Properties properties = new Properties();
    CommonPool.size(properties);
    assertEquals("2", properties.getProperty(CommonPool.PARALLELISM));
  }

  @Test
  void keepsAValueTheUserGave() {
    Properties properties = new Properties();
    properties.setProperty(CommonPool.PARALLELISM, "5");
    CommonPool.size(properties);
    assertEquals("5", properties.getProperty(CommonPool.PARALLELISM));
  }
}
