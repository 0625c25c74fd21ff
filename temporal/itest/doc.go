// Package itest holds the integration tests of the temporal module: real
// Temporal servers (temporaltest, in the test process), in-process and
// subprocess workers, the fake model server as the model. The script that
// runs them sets TEMPORAL_VERSION_CHECK_DISABLED=1 so that the server
// looks nothing up; nothing leaves loopback.
package itest
