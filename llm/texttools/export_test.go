package texttools

// JSONEqual is jsonEqual for the external tests.
var JSONEqual = jsonEqual
