// Package localrun runs the worker container of a rendered Deployment as a
// local process: with the container's environment, the files its volumes
// would mount placed in local directories, and its output prefixed with
// the component's name. `tinyctl dev` runs local workers with it; tests
// run the example worker with it.
package localrun
