//! The generated tonic client and server talk to each other over a real TCP socket.
//! (Only with `--features grpc`; the gateway double here is a test double, named as such.)

#![cfg(feature = "grpc")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use openshell_proto::v1::open_shell_client::OpenShellClient;
use openshell_proto::v1::open_shell_server::{OpenShell, OpenShellServer};
use openshell_proto::v1::{
    self, ExecSandboxEvent, ExecSandboxRequest, HealthRequest, HealthResponse, ServiceStatus,
    exec_sandbox_event::Payload,
};
use openshell_proto::{datamodel, default_workspace};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::codegen::BoxStream;
use tonic::{Request, Response, Status};

/// A fake gateway that answers Health and echoes ExecSandbox's argv; everything else is the
/// generated `UNIMPLEMENTED` default.
struct FakeGateway;

#[tonic::async_trait]
impl OpenShell for FakeGateway {
    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            status: ServiceStatus::Healthy.into(),
            version: "0.1.5-fake".into(),
        }))
    }

    async fn exec_sandbox(
        &self,
        request: Request<ExecSandboxRequest>,
    ) -> Result<Response<BoxStream<ExecSandboxEvent>>, Status> {
        let request = request.into_inner();
        if request.workspace_scope != Some(default_workspace()) {
            return Err(Status::invalid_argument("workspace_scope must be explicit"));
        }
        let echoed = format!("{} in {}", request.command.join(" "), request.sandbox);
        let events = vec![
            Ok(ExecSandboxEvent {
                payload: Some(Payload::Stdout(v1::ExecSandboxStdout {
                    data: echoed.into_bytes(),
                })),
            }),
            Ok(ExecSandboxEvent {
                payload: Some(Payload::Exit(v1::ExecSandboxExit { exit_code: 3 })),
            }),
        ];
        Ok(Response::new(Box::pin(tokio_stream::iter(events))))
    }
}

async fn connect() -> OpenShellClient<tonic::transport::Channel> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(OpenShellServer::new(FakeGateway))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    OpenShellClient::new(channel)
}

#[tokio::test]
async fn unary_and_server_streaming_calls_cross_a_real_socket() {
    let mut client = connect().await;

    let health = client.health(HealthRequest {}).await.unwrap().into_inner();
    assert_eq!(health.status(), ServiceStatus::Healthy);
    assert_eq!(health.version, "0.1.5-fake");

    let mut events = client
        .exec_sandbox(ExecSandboxRequest {
            sandbox: "pd-test".into(),
            command: vec!["echo".into(), "hi".into()],
            workspace_scope: Some(default_workspace()),
            ..ExecSandboxRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut seen = Vec::new();
    while let Some(event) = events.message().await.unwrap() {
        seen.push(event.payload.unwrap());
    }
    assert_eq!(
        seen,
        [
            Payload::Stdout(v1::ExecSandboxStdout {
                data: b"echo hi in pd-test".to_vec()
            }),
            Payload::Exit(v1::ExecSandboxExit { exit_code: 3 }),
        ]
    );
}

#[tokio::test]
async fn a_request_without_workspace_is_refused_and_unserved_rpcs_are_unimplemented() {
    let mut client = connect().await;
    let refused = client
        .exec_sandbox(ExecSandboxRequest::default())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);

    let unserved = client
        .create_provider(v1::CreateProviderRequest {
            provider: Some(datamodel::Provider::default()),
            workspace_scope: Some(default_workspace()),
            request_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(unserved.code(), tonic::Code::Unimplemented);
}
