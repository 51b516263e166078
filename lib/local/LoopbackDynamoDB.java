// Starts DynamoDB Local (its own ServerRunner, so every command-line option means what it means for the jar) with
// its HTTP listener bound to 127.0.0.1 instead of every interface: DynamoDB Local has no authentication and no
// option to choose the interface, so without this anyone on the network could read and write the local tables.
// Run in Java's source-file mode by lib/local/dynamodb.ts: java -cp DynamoDBLocal.jar LoopbackDynamoDB.java <options>
import java.lang.reflect.Field;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDB {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    // The server is built but not started: its connector can still be told which address to bind.
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    int bound = 0;
    for (Connector c : server.getConnectors()) {
      if (c instanceof AbstractNetworkConnector n) {
        n.setHost("127.0.0.1");
        bound++;
      }
    }
    // Refuse rather than listen on every interface.
    if (bound == 0) throw new IllegalStateException("DynamoDB Local has no network connector to bind to 127.0.0.1");
    proxy.start();
    proxy.join();
  }
}
